package shelfmark

// PageBuffer is memory a reader of a book's pages lends ListPages, to be
// read into again once the reader has done with the page it holds: the
// page's items (its children's Resources, not their metadata), the rows
// PageFiles reads, the files' Resources and the map that lists them.
// A book's pages are read a few hundred at a time, each with three to five
// files; read into fresh memory, a 1,200-page book allocates some 3 MB
// of these for the collector, about two fifths of what its manifest's
// build allocates. A page read into a buffer is valid until the buffer
// is read into again: the reader gives a buffer back only once it has
// done with the page, and keeps nothing of the page's files beyond that
// but their strings (which are never reused). One read at a time uses a
// buffer. The zero value is ready.
type PageBuffer struct {
	// Rows is what PageFiles reads the rows into.
	Rows FileRowBuffer
	// res holds the files' Resources, list their pointers (the lists of
	// files each a part of it), files the map Files of the page.
	res   []Resource
	list  []*Resource
	files map[ID][]*Resource
	// items holds the page's items, itemPtrs their list (Page.Items)
	items    []Resource
	itemPtrs []*Resource
}

// resources returns room for n Resources, reused.
func (b *PageBuffer) resources(n int) []Resource {
	if cap(b.res) < n {
		b.res = make([]Resource, n)
	}
	return b.res[:n]
}

// FileRowSpace is the room of one row PageFiles reads: the FileRow and
// the values it points to.
type FileRowSpace struct {
	FileRow FileRow
	Row     ResourceRow
	File    File
	Format  Format
}

// fileRowBlock is how many FileRowSpaces a FileRowBuffer allocates at
// once: one object for the collector to trace for that many rows.
const fileRowBlock = 64

// FileRowBuffer is memory the rows of ReadTx.PageFiles are read into,
// kept to be read into again: blocks of FileRowSpace, handed out in order
// from the first after each Reset. The rows of one read are valid until
// the next Reset. The zero value is ready.
type FileRowBuffer struct {
	blocks [][]FileRowSpace
	block  int // the block Next takes from
	next   int // the next space in it
	// Rows is the list a read returns, its room kept too.
	Rows []*FileRow
}

// Reset makes all the buffer's room free for the next read: the rows it
// held must no longer be used.
func (b *FileRowBuffer) Reset() {
	b.block, b.next = 0, 0
	clear(b.Rows)
	b.Rows = b.Rows[:0]
}

// Next returns the room of the next row, zeroed: nothing of an earlier
// read shows through a row that does not set every field.
func (b *FileRowBuffer) Next() *FileRowSpace {
	if b.block < len(b.blocks) && b.next == fileRowBlock {
		b.block, b.next = b.block+1, 0
	}
	if b.block == len(b.blocks) {
		b.blocks = append(b.blocks, make([]FileRowSpace, fileRowBlock))
		b.next = 0
	}
	p := &b.blocks[b.block][b.next]
	b.next++
	*p = FileRowSpace{}
	return p
}
