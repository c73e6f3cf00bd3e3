package storagetest

import (
	"context"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testCostMembers: a depositor filing works into a collection runs the
// same statements for 2 members as for 10, apart from the one row update
// each member's new version takes: the members' rows and depositors are
// read once each, in one statement (rule R15).
func testCostMembers(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	dep := e.user(t, "d", shelfmark.ScopeWrite)
	e.grant(t, nil, "user:d", shelfmark.RoleDepositor)
	var works []shelfmark.ID
	for i := 0; i < 12; i++ {
		w := rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindWork}))
		works = append(works, w.ID)
	}
	run := func(ids []shelfmark.ID) (reads []call) {
		t.Helper()
		calls := e.rec.capture(func() {
			if err := e.repo.AddMembers(as(dep), coll.ID, ids); err != nil {
				t.Fatal(err)
			}
		})
		for _, c := range withoutKeyBlocks(calls) {
			if !strings.HasPrefix(c.query, "UPDATE resources SET") {
				reads = append(reads, c)
			}
		}
		return reads
	}
	small, large := run(works[:2]), run(works[2:])
	if len(small) != len(large) {
		t.Fatalf("adding members: %d statements (besides the members' version updates) for 2 members, %d for 10.\n2 members:\n%s\n10 members:\n%s",
			len(small), len(large), dump(small), dump(large))
	}
	t.Logf("adding members as a depositor: %d statements besides the version updates, at both sizes", len(small))
}
