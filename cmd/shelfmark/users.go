package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/argon2id"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// accountsDB holds the database flags of the account commands, which act
// on the store directly as the system (so they work on a stopped server,
// and they are how the first administrator gets a token).
type accountsDB struct {
	data, database string
}

// register adds --data and --database.
func (d *accountsDB) register(pf *pflag.FlagSet) {
	pf.StringVar(&d.data, "data", "shelfmark-data", "directory of the SQLite database (without --database)")
	pf.StringVar(&d.database, "database", "", "PostgreSQL URL (postgres://user@host/db)")
	setup.AnnotateEnv(pf)
}

// accountsEnv is what an account command works with.
type accountsEnv struct {
	acc  *shelfmark.Accounts
	repo *shelfmark.Repository
}

// open opens the repository the flags name and its account service.
func (d *accountsDB) open(ctx context.Context) (*accountsEnv, func(), error) {
	if d.database == "" {
		if err := requireDir(d.data); err != nil {
			return nil, nil, err
		}
	}
	store, err := setup.OpenStorage(ctx, d.database, d.data, "safe", 2)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	hasher, err := argon2id.New(argon2id.DefaultParams(), 0)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	// no cache: a command authenticates nothing
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{Hasher: hasher, CacheTTL: -1})
	return &accountsEnv{acc: acc, repo: repo}, func() { repo.Close(); store.Close() }, nil
}

// with wraps an account command: environment, store, and the system as
// the caller (named "system:cli" in the audit trail).
func (d *accountsDB) with(fn func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := setup.ApplyEnv(cmd.Flags()); err != nil {
			return err
		}
		ctx := shelfmark.WithCaller(cmd.Context(), shelfmark.SystemCaller("cli"))
		e, closeEnv, err := d.open(ctx)
		if err != nil {
			return err
		}
		defer closeEnv()
		return fn(ctx, e, cmd, args)
	}
}

func newUserCommand() *cobra.Command {
	var db accountsDB
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Add, list, disable and enable user accounts",
		Long: `Manage the accounts of the repository that "serve" uses (--data / --database).
These commands act on the database directly, as the system, so they work
while the server runs and while it is stopped.

  shelfmark user add alice --group staff        a user who signs in with tokens
  shelfmark user add bob --password-stdin       ... or with a password, read from standard input
  shelfmark user add carol --admin              an administrator
  shelfmark user list
  shelfmark user disable alice                  her tokens and sessions stop working
  shelfmark user enable alice`,
	}
	db.register(cmd.PersistentFlags())
	var admin, passwordStdin bool
	var groups []string
	add := &cobra.Command{Use: "add NAME", Short: "Add a user", Args: cobra.ExactArgs(1),
		RunE: db.with(func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, args []string) error {
			password := ""
			if passwordStdin {
				pw, err := readPassword(cmd.InOrStdin())
				if err != nil {
					return err
				}
				password = pw
			}
			u, err := e.acc.AddUser(ctx, args[0], password, admin, groups)
			if err != nil {
				return err
			}
			what := "user"
			if u.Admin {
				what = "administrator"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added %s %s", what, u.Name)
			if len(u.Groups) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), " (groups %s)", strings.Join(u.Groups, ", "))
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return nil
		})}
	add.Flags().BoolVar(&admin, "admin", false, "make the user an administrator (every role everywhere)")
	add.Flags().StringArrayVar(&groups, "group", nil, "a group the user belongs to (repeatable)")
	add.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the user's password from the first line of standard input (at least 8 characters)")
	list := &cobra.Command{Use: "list", Short: "List users", Args: cobra.NoArgs,
		RunE: db.with(func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, _ []string) error {
			return printUsers(ctx, e.acc, cmd.OutOrStdout())
		})}
	disable := func(disabled bool) func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, args []string) error {
		return func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, args []string) error {
			if err := e.acc.SetDisabled(ctx, args[0], disabled); err != nil {
				return err
			}
			if disabled {
				fmt.Fprintf(cmd.OutOrStdout(), "disabled %s: its tokens and sessions no longer work (servers that checked one in the last %s may accept it until then)\n", args[0], cacheWindow)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "enabled %s\n", args[0])
			}
			return nil
		}
	}
	password := &cobra.Command{Use: "password NAME", Short: "Set a user's password from the first line of standard input; its sessions end", Args: cobra.ExactArgs(1),
		RunE: db.with(func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, args []string) error {
			pw, err := readPassword(cmd.InOrStdin())
			if err != nil {
				return err
			}
			if err := e.acc.SetPassword(ctx, args[0], pw); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "set the password of %s; its sessions have ended\n", args[0])
			return nil
		})}
	cmd.AddCommand(add, list, password,
		&cobra.Command{Use: "disable NAME", Short: "Disable a user: its tokens and sessions stop working", Args: cobra.ExactArgs(1), RunE: db.with(disable(true))},
		&cobra.Command{Use: "enable NAME", Short: "Enable a disabled user", Args: cobra.ExactArgs(1), RunE: db.with(disable(false))})
	return cmd
}

// cacheWindow is how long a server may keep accepting a credential that
// was revoked through another process (AccountsOptions.CacheTTL's default).
const cacheWindow = 10 * time.Second

// readPassword reads the first line of r.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read the password: %w", err)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", fmt.Errorf("--password-stdin: standard input has no password")
	}
	return line, nil
}

// printUsers lists every user.
func printUsers(ctx context.Context, acc *shelfmark.Accounts, w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADMIN\tSTATE\tGROUPS\tCREATED")
	var after int64
	for {
		us, err := acc.Users(ctx, after, 1000)
		if err != nil {
			return err
		}
		for _, u := range us {
			state := "active"
			if u.Disabled {
				state = "DISABLED"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Name, yesNo(u.Admin), state, strings.Join(u.Groups, ","), u.Created.UTC().Format(time.RFC3339))
			after = u.Key
		}
		if len(us) < 1000 {
			break
		}
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func newGroupCommand() *cobra.Command {
	var db accountsDB
	cmd := &cobra.Command{
		Use:   "group",
		Short: "Add users to groups and remove them",
		Long: `Put users in groups, or take them out. Roles on collections may be granted
to a group (group:NAME); its members hold them. Acts on the database
directly (--data / --database), as the system.

  shelfmark group add alice staff
  shelfmark group remove alice staff`,
	}
	db.register(cmd.PersistentFlags())
	change := func(add bool) func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, args []string) error {
		return func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, args []string) error {
			name, group := args[0], args[1]
			u, err := e.acc.User(ctx, name)
			if err != nil {
				return err
			}
			groups := slices.Clone(u.Groups)
			if add {
				groups = append(groups, group)
			} else {
				if !slices.Contains(groups, group) {
					return fmt.Errorf("%s is not in the group %s", name, group)
				}
				groups = slices.DeleteFunc(groups, func(g string) bool { return g == group })
			}
			if err := e.acc.SetGroups(ctx, name, groups); err != nil {
				return err
			}
			u, err = e.acc.User(ctx, name)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: groups %s\n", name, strings.Join(u.Groups, ", "))
			return nil
		}
	}
	cmd.AddCommand(
		&cobra.Command{Use: "add USER GROUP", Short: "Add a user to a group", Args: cobra.ExactArgs(2), RunE: db.with(change(true))},
		&cobra.Command{Use: "remove USER GROUP", Short: "Remove a user from a group", Args: cobra.ExactArgs(2), RunE: db.with(change(false))})
	return cmd
}
