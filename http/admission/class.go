package admission

import (
	"fmt"
	"strings"
)

// Class is what a request costs the server, which decides the budget it
// is admitted against.
type Class int

// The classes, cheapest first. Cheap requests (static files, probes,
// robots.txt, the sitemap, sign-in pages) are never queued or refused.
const (
	Cheap      Class = iota
	Page             // a work, collection, home or archive page; a IIIF manifest; a resource's metadata
	Image            // a IIIF image request (decoded and encoded)
	File             // a file's bytes (long-lived, little CPU)
	Search           // a search with text
	Facet            // a listing by facet or filter, without text
	BookSearch       // search inside a book (IIIF content search)
	PDF              // a work as one file: its pages as a PDF, its files as a ZIP
	Harvest          // an OAI-PMH page
	Write            // a change: any method other than GET and HEAD
	numClasses
)

var classNames = [numClasses]string{"cheap", "page", "image", "file", "search", "facet", "book_search", "pdf", "harvest", "write"}

// String is the class's name, as settings and metrics spell it.
func (c Class) String() string {
	if c < 0 || c >= numClasses {
		return fmt.Sprintf("class(%d)", int(c))
	}
	return classNames[c]
}

// Classes lists the classes that have budgets (every class but Cheap).
func Classes() []Class {
	out := make([]Class, 0, numClasses-1)
	for c := Page; c < numClasses; c++ {
		out = append(out, c)
	}
	return out
}

// ParseClass reads a class's name.
func ParseClass(s string) (Class, error) {
	for c, n := range classNames {
		if strings.EqualFold(s, n) {
			return Class(c), nil
		}
	}
	return 0, fmt.Errorf("%q is not a request class (one of %s)", s, strings.Join(classNames[1:], ", "))
}

// Group is who asks: each group has budgets of its own, so one group
// never waits in another's queue.
type Group int

// The groups.
const (
	// SignedIn callers (a person's session, a harvester's or a script's
	// token), each a client by its user.
	SignedIn Group = iota
	// Anonymous callers, each a client by its address (or the address a
	// trusted proxy names).
	Anonymous
	// Robots are anonymous callers whose user agent is on the COUNTER
	// robots list; they get half the anonymous budgets and rates.
	Robot
	numGroups
)

var groupNames = [numGroups]string{"signed_in", "anonymous", "robot"}

// String is the group's name, as metrics spell it.
func (g Group) String() string {
	if g < 0 || g >= numGroups {
		return fmt.Sprintf("group(%d)", int(g))
	}
	return groupNames[g]
}

// Groups lists the groups.
func Groups() []Group { return []Group{SignedIn, Anonymous, Robot} }
