-- A capture's own URL (its WARC-Target-URI, canonicalised) when it is not
-- the URL its key's web_urls row names: the row keeps the first URL met
-- for a SURT, and URLs that differ only in scheme, "www.", a trailing
-- slash or the order of query arguments share a SURT (a redirect from
-- http://host/visit to https://www.host/visit/ is one key). NULL, costing
-- nothing, for the usual capture whose URL is its row's; adding a column
-- without a default rewrites no row. Captures indexed before this column
-- have none and show their row's URL, as before (their own URL is in
-- their WARC record only).
ALTER TABLE web_captures ADD COLUMN target text;
