package kit

// This file holds the bodies of the bulk ingest protocol (POST
// /api/v1/blobs, /api/v1/groups and /api/v1/sources/lookup), which the
// server reads and writes and the client writes and reads.

import (
	"encoding/json"

	"github.com/shelfmark/shelfmark"
)

// BlobJSON is the answer of POST /api/v1/blobs.
type BlobJSON struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Digests holds every digest computed, by algorithm (sha-256 and those
	// ?digests= or the request's digest fields asked for).
	Digests map[shelfmark.DigestAlgorithm]string `json:"digests"`
}

// LookupBody is the body of POST /api/v1/sources/lookup.
type LookupBody struct {
	Keys []string `json:"keys"`
}

// LookupJSON is the answer of POST /api/v1/sources/lookup.
type LookupJSON struct {
	Found map[string]shelfmark.ID `json:"found"`
}

// GroupJSON is one group of a /groups body: resources named by refs, the
// client's own names, for which the server mints ids. FormerSourceKey and
// StoreAnyway are shelfmark.NewGroup's FormerKey and StoreAnyway.
type GroupJSON struct {
	SourceKey       string        `json:"sourceKey,omitempty"`
	FormerSourceKey string        `json:"formerSourceKey,omitempty"`
	StoreAnyway     bool          `json:"storeAnyway,omitempty"`
	Resources       []GroupMember `json:"resources"`
	Order           []string      `json:"order,omitempty"`
}

// GroupMember is one resource of a group. Parent and MemberOf name a ref of
// the group (an earlier resource) or the id of a stored resource.
type GroupMember struct {
	Ref        string          `json:"ref"`
	Kind       shelfmark.Kind  `json:"kind"`
	Visibility string          `json:"visibility,omitempty"`
	Embargo    json.RawMessage `json:"embargo,omitempty"`
	Lease      json.RawMessage `json:"lease,omitempty"`
	Parent     string          `json:"parent,omitempty"`
	MemberOf   []string        `json:"memberOf,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	File       *GroupFile      `json:"file,omitempty"`
}

// GroupFile describes the stored bytes of a file of a group: the caller
// must have sent them to /api/v1/blobs before, or be able to read a file
// that holds them (the engine decides, after the right to create the
// group).
type GroupFile struct {
	Name      string `json:"name"`
	MediaType string `json:"mediaType,omitempty"`
	SHA256    string `json:"sha256"`
	Size      *int64 `json:"size"`
	Use       string `json:"use,omitempty"`
}

// GroupResult is the outcome of one group.
type GroupResult struct {
	Status int `json:"status"`
	// ID is the root's id when stored, or the id of the root stored before
	// under the same source key (409; the error's details say whether it
	// was found by the former key, "former_key", or stored anyway before,
	// "anyway").
	ID shelfmark.ID `json:"id,omitempty"`
	// IDs maps every ref of a stored group to its minted id.
	IDs   map[string]shelfmark.ID `json:"ids,omitempty"`
	Error *ErrorBody              `json:"error,omitempty"`
}
