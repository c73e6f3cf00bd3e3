package kit

import (
	"strconv"

	"github.com/shelfmark/shelfmark"
)

// AuditQuery reads the filters of a page of the audit trail as the REST
// API and the interface both take them: resource (an id), actor, after (a
// time) and cursor (the key of the last entry of the page before), each
// "" when absent, and limit entries. A value quoted in an error is cut
// short (TruncateParam).
func AuditQuery(ids *shelfmark.IDCodec, resource, actor, after, cursor string, limit int) (shelfmark.AuditQuery, error) {
	q := shelfmark.AuditQuery{Actor: actor, Limit: limit}
	if resource != "" {
		k, err := ids.Key(shelfmark.ID(resource))
		if err != nil {
			return q, shelfmark.Errorf(shelfmark.EINVALID, "resource: %q is not a resource id.", TruncateParam(resource))
		}
		q.Resource = k
	}
	if after != "" {
		t, err := ParseTime("after", after)
		if err != nil {
			return q, err
		}
		q.After = t
	}
	if cursor != "" {
		k, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil || k <= 0 {
			return q, shelfmark.Errorf(shelfmark.EINVALID, "cursor: %q is not the next of an audit page.", TruncateParam(cursor))
		}
		q.Before = k
	}
	return q, nil
}
