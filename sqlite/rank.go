package sqlite

// int shelfmark_register_rank(void);
import "C"

import (
	"fmt"
	"sync"
)

// registerRank adds the FTS5 function shelfmark_rank (rank.c) to every
// SQLite connection the process opens from then on, and turns on each
// one's query planner stability guarantee (a statement is compiled once,
// whatever is bound to it later; TestPlannedOnce): SQLite's automatic
// extensions are the process's, as the driver that compiles SQLite in is,
// so it runs once, before Open opens its pools. It costs nothing per
// connection beyond one look-up of FTS5's API.
var registerRank = sync.OnceValue(func() error {
	if rc := C.shelfmark_register_rank(); rc != 0 {
		return fmt.Errorf("register the FTS5 function shelfmark_rank: SQLite error %d", int(rc))
	}
	return nil
})
