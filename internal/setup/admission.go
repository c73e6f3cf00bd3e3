package setup

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/http/admission"
)

// admissionFlags are serve's budgets for requests by what they cost and
// who asks (package admission).
type admissionFlags struct {
	off                    bool
	budgets, shares, rates []string
	bursts, robots         []string
	queueWait, shareWait   time.Duration
	maxWaiting, maxHeld    int
	cores, expensive       int
}

func (a *admissionFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&a.off, "admission-off", false, "admit every request at once, with no budget, queue or refusal (for measuring the server alone; a storm of expensive requests then slows everyone)")
	f.StringArrayVar(&a.budgets, "admission-budget", nil, "CLASS=N: requests of a class served at once for the signed-in, and (separately) for anonymous callers; robots get half (classes: page, image, file, search, facet, book_search, pdf, harvest, write; default: scaled to the processors); repeat or separate with commas")
	f.StringArrayVar(&a.shares, "admission-share", nil, "CLASS=N: how many of a class's budget one client may run at once (default: scaled to the processors)")
	f.StringArrayVar(&a.rates, "admission-rate", nil, "CLASS=R: requests a second of a class one anonymous client may start, sustained (robots half; 0: no rate share; defaults: page=10, image=100, file=10, search=1, facet=1, book_search=2, pdf=0.1, harvest=5, write=2)")
	f.StringArrayVar(&a.bursts, "admission-burst", nil, "CLASS=N: requests of a class an anonymous client may start at once after a pause (defaults: page=60, image=400, file=60, search=10, facet=10, book_search=20, pdf=3, harvest=20, write=20)")
	f.IntVar(&a.expensive, "admission-expensive", 0, "how many requests of the expensive classes (search, facet, book_search, pdf) anonymous callers may run at once all together, beside each class's budget, so a storm from many addresses leaves processors for pages and the signed-in; robots get half (0: half the processors, at least 1)")
	f.DurationVar(&a.queueWait, "admission-queue-wait", 2*time.Second, "how long a request waits for a slot of a class whose budget is all in use before it is refused with 503 and Retry-After")
	f.DurationVar(&a.shareWait, "admission-share-wait", time.Second, "how long a request of a client past its share waits before it is refused with 429 and Retry-After")
	f.IntVar(&a.maxWaiting, "admission-max-waiting", 0, "the most requests one class's queue holds (0: 256 per slot of its budget, at least 1,024); past it 503 at once")
	f.IntVar(&a.maxHeld, "admission-max-held", 16384, "the most requests held waiting (in queues, for a share or before a refusal) at once; past it refusals come at once")
	f.IntVar(&a.cores, "admission-cores", 0, "the processors the default budgets are scaled to (0: those the server uses)")
	f.StringArrayVar(&a.robots, "robot-agent", nil, "a regular expression (matched without regard to case) of user agents to treat as robots, besides the COUNTER robots list; repeat for several")
}

// apply sets the budgets on opts.
func (a *admissionFlags) apply(opts *shttp.Options) error {
	s := admission.Settings{Off: a.off, Budgets: map[admission.Class]int{}, Shares: map[admission.Class]int{},
		Rates: map[admission.Class]float64{}, Bursts: map[admission.Class]float64{},
		QueueWait: a.queueWait, ShareWait: a.shareWait, MaxWaiting: a.maxWaiting, MaxHeld: a.maxHeld, Expensive: a.expensive}
	if err := admission.ParseAssignments(a.budgets, s.Budgets, admission.PositiveInt); err != nil {
		return fmt.Errorf("--admission-budget: %w", err)
	}
	if err := admission.ParseAssignments(a.shares, s.Shares, admission.PositiveInt); err != nil {
		return fmt.Errorf("--admission-share: %w", err)
	}
	if err := admission.ParseAssignments(a.rates, s.Rates, admission.NonNegativeFloat); err != nil {
		return fmt.Errorf("--admission-rate: %w", err)
	}
	if err := admission.ParseAssignments(a.bursts, s.Bursts, admission.NonNegativeFloat); err != nil {
		return fmt.Errorf("--admission-burst: %w", err)
	}
	if a.queueWait < 0 || a.shareWait < 0 || a.maxWaiting < 0 || a.maxHeld < 0 || a.cores < 0 || a.expensive < 0 {
		return fmt.Errorf("the --admission-* waits and counts must not be negative")
	}
	if _, err := admission.NewRobots(a.robots...); err != nil {
		return fmt.Errorf("--robot-agent: %w", err)
	}
	opts.Admission, opts.Cores, opts.RobotAgents = s, a.cores, a.robots
	return nil
}
