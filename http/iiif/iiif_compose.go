package iiif

// This file composes the images of level 2 requests that are neither a
// stored tile nor a listed size, from the page's pyramid: it picks the
// smallest level of the pyramid at or above the output's resolution,
// reads from the archive only the tiles of that level that cover the
// region, decodes them (JPEG, with libjpeg-turbo: package libjpeg; of a
// tile at the region's edge only the rows it takes, and about its
// columns), draws them into one image, scales it to the output size (bilinear, two
// samples a side, which reads every source pixel since the level is less
// than twice the output in each direction: iiif_scale.go), mirrors and
// rotates it, converts its quality and encodes it (JPEG with
// libjpeg-turbo, or PNG).
//
// Cost: a decode of 1 to 2 ms per 512-pixel tile of a scan on one core,
// and an encode of about 1 ms per 512 × 512 output (three and seven times
// that with image/jpeg, under the nolibjpeg tag), so a region seen at a
// viewer's size (a few tiles) takes 2 to 20 ms of a core; 32 MiB of
// decoded tiles are kept, so a neighbouring region decodes only the tiles
// it does not share. What bounds it: the output is at most the limits
// info.json states (maxWidth, maxHeight, maxArea), and the level read is
// less than twice the output on each side, so about four times the
// output's area is decoded (and the rest of the tiles at its edges); no
// more images are composed at once than the semaphore allows (one per
// core, GOMAXPROCS), the others waiting their turn, and an image's tiles
// are decoded on more cores only while their slots are idle; requests
// for the same image at the same time compose it once; and the results
// are kept in a cache bounded by bytes, least recently used out first,
// keyed by the page, its pyramid's digest and the canonical request, so a
// repeated request is a copy from memory. The cache is looked up only
// after the caller's access to the page was checked, as for every
// request, so it never serves a result to a caller who may not read the
// page.

import (
	"bytes"
	"container/list"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/libjpeg"
	"golang.org/x/image/draw"
)

const (
	// ImageCacheBytes is the default size of the cache of composed images.
	ImageCacheBytes = 64 << 20
	// imageQuality is the JPEG quality of composed images (as the tiles').
	imageQuality = 85
	// decodedTileBytes is the memory kept for decoded tiles (about 85
	// tiles of 512 × 512 in colour): a region next to one just composed,
	// or the same region in another quality, rotation or format, decodes
	// only the tiles it does not share with it.
	decodedTileBytes = 32 << 20
	// imageMaxSide and imageMaxArea are the server's limits on a composed
	// image: a page whose largest listed size (its access copy) is smaller
	// than its full size is served at most at that size.
	imageMaxSide = 4096
	imageMaxArea = 4 << 20
	// maxTilePixels is the most pixels a tile may have to be decoded
	// (dzsave's tiles are 512 × 512 here; a stored archive is trusted no
	// further than that, with room to spare)
	maxTilePixels = 4096 * 4096
)

// lru keeps values by key up to a number of bytes (as sizeOf counts
// them); least recently used out first. Safe for concurrent use.
type lru[V any] struct {
	mu     sync.Mutex
	max    int64
	size   int64
	sizeOf func(V) int64
	order  *list.List // of *lruEntry[V], most recent first
	byKey  map[string]*list.Element
}

// lruEntry is one value and its size.
type lruEntry[V any] struct {
	key  string
	val  V
	size int64
}

// newLRU makes a cache of at most max bytes (0: none kept).
func newLRU[V any](max int64, sizeOf func(V) int64) *lru[V] {
	return &lru[V]{max: max, sizeOf: sizeOf, order: list.New(), byKey: map[string]*list.Element{}}
}

// get returns the value kept under key.
func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruEntry[V]).val, true
}

// put keeps a value under key, dropping the least recently used past the
// cache's size; a value larger than an eighth of the cache is not kept.
func (c *lru[V]) put(key string, val V) {
	n := c.sizeOf(val) + int64(len(key))
	if n > c.max/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		return
	}
	c.byKey[key] = c.order.PushFront(&lruEntry[V]{key: key, val: val, size: n})
	c.size += n
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*lruEntry[V])
		c.order.Remove(last)
		delete(c.byKey, e.key)
		c.size -= e.size
	}
}

// bytes is what the cache holds now.
func (c *lru[V]) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// imageCache keeps composed images (their encoded bytes).
type imageCache = lru[[]byte]

// newImageCache makes a cache of composed images of at most max bytes.
func newImageCache(max int64) *imageCache {
	return newLRU(max, func(b []byte) int64 { return int64(len(b)) })
}

// tileCache keeps decoded tiles, which are never written to once
// decoded (compose only reads them).
type tileCache = lru[image.Image]

// newTileCache makes a cache of decoded tiles of at most max bytes.
func newTileCache(max int64) *tileCache {
	return newLRU(max, func(m image.Image) int64 {
		switch m := m.(type) {
		case *image.YCbCr:
			return int64(len(m.Y) + len(m.Cb) + len(m.Cr))
		case *image.Gray:
			return int64(len(m.Pix))
		case *image.RGBA:
			return int64(len(m.Pix))
		}
		b := m.Bounds()
		return 4 * int64(b.Dx()*b.Dy())
	})
}

// composer composes images, at most as many at once as its semaphore
// holds.
type composer struct {
	sem   chan struct{}
	cache *imageCache
	tiles *tileCache
	// flights are the images being composed, by cache key: a request for
	// one waits for it instead of composing it again
	flightMu sync.Mutex
	flights  map[string]*flight
	// busy is how many images are being composed, peak the most at once
	// so far and count how many were (for tests and benchmarks)
	mu                sync.Mutex
	busy, peak, count int
}

// newComposer makes a composer of GOMAXPROCS slots and a cache of
// cacheBytes.
func newComposer(cacheBytes int64) *composer {
	return &composer{sem: make(chan struct{}, max(1, runtime.GOMAXPROCS(0))), cache: newImageCache(cacheBytes), tiles: newTileCache(decodedTileBytes),
		flights: map[string]*flight{}}
}

// flight is one image being composed; done is closed when body and err
// are set.
type flight struct {
	done chan struct{}
	body []byte
	err  error
}

// image returns the image kept under key, or the one being composed
// under it, or composes it with build (in a slot of the semaphore) and
// keeps it. Requests for the same key at the same time compose it once;
// when the one composing it fails (its client gave up, say), a waiter
// still waiting composes it itself, once.
func (c *composer) image(ctx context.Context, key string, build func() ([]byte, error)) ([]byte, error) {
	for try := 0; ; try++ {
		if body, ok := c.cache.get(key); ok {
			return body, nil
		}
		c.flightMu.Lock()
		f, ok := c.flights[key]
		if !ok {
			// kept by a composition that ended since the look above (it
			// keeps its image before it ends its flight)
			if body, ok := c.cache.get(key); ok {
				c.flightMu.Unlock()
				return body, nil
			}
			break
		}
		c.flightMu.Unlock()
		select {
		case <-f.done:
			if f.err == nil || try > 0 {
				return f.body, f.err
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("iiif: waiting for an image being composed: %w", ctx.Err())
		}
	}
	// c.flightMu is held
	f := &flight{done: make(chan struct{})}
	c.flights[key] = f
	c.flightMu.Unlock()
	defer func() {
		c.flightMu.Lock()
		delete(c.flights, key)
		c.flightMu.Unlock()
		close(f.done)
	}()
	if f.err = c.acquire(ctx); f.err != nil {
		return nil, f.err
	}
	f.body, f.err = func() ([]byte, error) {
		defer c.release()
		return build()
	}()
	if f.err == nil {
		c.cache.put(key, f.body)
	}
	return f.body, f.err
}

// acquire takes a slot, waiting for one until ctx ends.
func (c *composer) acquire(ctx context.Context) error {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("iiif: waiting to compose an image: %w", ctx.Err())
	}
	c.mu.Lock()
	c.busy++
	c.count++
	c.peak = max(c.peak, c.busy)
	c.mu.Unlock()
	return nil
}

// trySlot takes a slot if one is idle, for more decoding within an image
// being composed (not counted as an image); release gives it back.
func (c *composer) trySlot() (release func(), ok bool) {
	select {
	case c.sem <- struct{}{}:
		return func() { <-c.sem }, true
	default:
		return nil, false
	}
}

// release gives a slot back.
func (c *composer) release() {
	c.mu.Lock()
	c.busy--
	c.mu.Unlock()
	<-c.sem
}

// tileSide is the side of a pyramid's tiles (width, height).
func tileSide(info *shelfmark.TileInfo) (int, int, []int) {
	if len(info.Tiles) == 0 {
		return 0, 0, nil
	}
	t := info.Tiles[0]
	th := t.Height
	if th == 0 {
		th = t.Width
	}
	scales := append([]int(nil), t.ScaleFactors...)
	sort.Sort(sort.Reverse(sort.IntSlice(scales)))
	return t.Width, th, scales
}

// tileName is the archive entry (after the pyramid's prefix) of the tile
// in column col, row row of the level at scale s, as dzsave names it:
// its region of the full image and its size at that level.
func tileName(info *shelfmark.TileInfo, tw, th, s, col, row int) string {
	fx, fy := col*tw*s, row*th*s
	fw, fh := min(tw*s, info.Width-fx), min(th*s, info.Height-fy)
	return fmt.Sprintf("%d,%d,%d,%d/%d,%d/0/default.jpg", fx, fy, fw, fh, (fw+s-1)/s, (fh+s-1)/s)
}

// levelFor is the scale factor of the smallest level of the pyramid at or
// above the output's resolution: a region r shown at w × h.
func levelFor(info *shelfmark.TileInfo, r imageRect, w, h int) int {
	_, _, scales := tileSide(info)
	for _, s := range scales { // largest first
		if r.w >= w*s && r.h >= h*s {
			return s
		}
	}
	return 1
}

// pyramidArchive reads tiles of one pyramid from its archive, and keeps
// them decoded in decoded (nil: none kept).
type pyramidArchive struct {
	idx     *tileIndex
	prefix  string
	ra      io.ReaderAt
	decoded *tileCache
	// spare takes an idle slot of the semaphore, if there is one, for
	// one more goroutine decoding tiles; nil: none
	spare func() (release func(), ok bool)
}

// tile reads and decodes the entry name (after the prefix), a tile of
// size pixels, or finds it decoded: the part need of it (in the tile's
// pixels) at least. A tile needed whole is decoded whole and kept; of
// one needed in part only the rows of that part are decoded (and about
// its columns), not kept, unless the whole tile was kept before.
func (a pyramidArchive) tile(name string, size image.Point, need image.Rectangle) (image.Image, error) {
	key := a.idx.sha + "/" + a.prefix + name
	if a.decoded != nil {
		if img, ok := a.decoded.get(key); ok {
			return img, nil
		}
	}
	e, ok := a.idx.entries[a.prefix+name]
	if !ok {
		return nil, fmt.Errorf("tiles %s: no tile %s%s", a.idx.sha, a.prefix, name)
	}
	data := make([]byte, e.size)
	if _, err := a.ra.ReadAt(data, e.offset); err != nil {
		return nil, fmt.Errorf("tiles %s: read %s%s: %w", a.idx.sha, a.prefix, name, err)
	}
	whole := image.Rectangle{Max: size}
	if whole.In(need) {
		need = whole
	}
	img, err := libjpeg.DecodeRect(data, need, maxTilePixels)
	if err != nil {
		return nil, fmt.Errorf("tiles %s: decode %s%s: %w", a.idx.sha, a.prefix, name, err)
	}
	if a.decoded != nil && img.Bounds() == whole {
		a.decoded.put(key, img)
	}
	return img, nil
}

// compose makes the image q asks for from the pyramid info, whose tiles a
// reads, and encodes it; the second result is its media type.
func compose(info *shelfmark.TileInfo, a pyramidArchive, q *imageRequest) ([]byte, string, error) {
	tw, th, _ := tileSide(info)
	if tw <= 0 || th <= 0 {
		return nil, "", fmt.Errorf("tiles %s: the pyramid has no tile set", a.idx.sha)
	}
	r := q.region
	ow, oh := q.sizes[0][0], q.sizes[0][1]
	s := levelFor(info, r, ow, oh)
	// the region at that level, and the level's size
	lw, lh := (info.Width+s-1)/s, (info.Height+s-1)/s
	lx0, ly0 := r.x/s, r.y/s
	lx1, ly1 := min((r.x+r.w+s-1)/s, lw), min((r.y+r.h+s-1)/s, lh)
	canvas := image.NewRGBA(image.Rect(0, 0, lx1-lx0, ly1-ly0))
	var at, size []image.Point // of each tile: its place in the canvas, its size
	var names []string
	for row := ly0 / th; row*th < ly1; row++ {
		for col := lx0 / tw; col*tw < lx1; col++ {
			at = append(at, image.Pt(col*tw-lx0, row*th-ly0))
			size = append(size, image.Pt(min(tw, lw-col*tw), min(th, lh-row*th)))
			names = append(names, tileName(info, tw, th, s, col, row))
		}
	}
	// the tiles are decoded and drawn by this goroutine and as many more
	// as there are idle slots of the semaphore (each tile writes its own
	// part of the canvas)
	var (
		next   atomic.Int64
		failed atomic.Pointer[error]
		colour atomic.Bool // a tile not grayscale
		wg     sync.WaitGroup
	)
	work := func() {
		for i := int(next.Add(1)) - 1; i < len(names) && failed.Load() == nil; i = int(next.Add(1)) - 1 {
			img, err := a.tile(names[i], size[i], canvas.Rect.Sub(at[i]))
			if err != nil {
				failed.CompareAndSwap(nil, &err)
				return
			}
			if _, ok := img.(*image.Gray); !ok {
				colour.Store(true)
			}
			draw.Draw(canvas, img.Bounds().Add(at[i]), img, img.Bounds().Min, draw.Src)
		}
	}
	for extra := 1; extra < len(names) && a.spare != nil; extra++ {
		release, ok := a.spare()
		if !ok {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer release()
			work()
		}()
	}
	work()
	wg.Wait()
	if err := failed.Load(); err != nil {
		return nil, "", *err
	}
	gray := !colour.Load()
	var out *image.RGBA
	if canvas.Rect.Dx() == ow && canvas.Rect.Dy() == oh {
		out = canvas
	} else {
		out = image.NewRGBA(image.Rect(0, 0, ow, oh))
		bilinear(out, canvas)
	}
	out = rotate(out, q.mirror, q.degrees)
	var m image.Image = out
	quality := q.quality
	if quality == "default" && gray {
		quality = "gray"
	}
	switch quality {
	case "gray":
		m = toGray(out, false)
	case "bitonal":
		g := toGray(out, true)
		m = g
		if q.format == "png" {
			// one bit a pixel
			m = &image.Paletted{Pix: g.Pix, Stride: g.Stride, Rect: g.Rect, Palette: color.Palette{color.Black, color.White}}
			for i, v := range g.Pix {
				g.Pix[i] = v / 255
			}
		}
	}
	var buf bytes.Buffer
	switch q.format {
	case "png":
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&buf, m); err != nil {
			return nil, "", fmt.Errorf("iiif: encode png: %w", err)
		}
		return buf.Bytes(), "image/png", nil
	default:
		b, err := libjpeg.Encode(m, imageQuality)
		if err != nil {
			return nil, "", fmt.Errorf("iiif: %w", err)
		}
		return b, "image/jpeg", nil
	}
}

// rotate mirrors m (on its vertical axis) when asked, then turns it
// clockwise by degrees (a multiple of 90).
func rotate(m *image.RGBA, mirror bool, degrees int) *image.RGBA {
	turns := (degrees / 90) % 4
	if !mirror && turns == 0 {
		return m
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	dw, dh := w, h
	if turns%2 == 1 {
		dw, dh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < h; y++ {
		src := m.Pix[y*m.Stride : y*m.Stride+4*w]
		for x := 0; x < w; x++ {
			sx := x
			if mirror {
				sx = w - 1 - x
			}
			var dx, dy int
			switch turns {
			case 0:
				dx, dy = x, y
			case 1:
				dx, dy = h-1-y, x
			case 2:
				dx, dy = w-1-x, h-1-y
			case 3:
				dx, dy = y, w-1-x
			}
			copy(out.Pix[dy*out.Stride+4*dx:dy*out.Stride+4*dx+4], src[4*sx:4*sx+4])
		}
	}
	return out
}

// toGray converts m to its luma (ITU-R BT.601, as image/color does);
// bitonal makes each pixel black or white, at half intensity.
func toGray(m *image.RGBA, bitonal bool) *image.Gray {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	g := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		src := m.Pix[y*m.Stride : y*m.Stride+4*w]
		dst := g.Pix[y*g.Stride : y*g.Stride+w]
		for x := range dst {
			r, gr, b := uint32(src[4*x]), uint32(src[4*x+1]), uint32(src[4*x+2])
			v := uint8((19595*r + 38470*gr + 7471*b + 1<<15) >> 16)
			if bitonal {
				if v >= 128 {
					v = 255
				} else {
					v = 0
				}
			}
			dst[x] = v
		}
	}
	return g
}

// openPyramid opens the archive of a page's pyramid for reading tiles;
// close it after.
func (s *Handler) openPyramid(ctx context.Context, p *iiifPage, idx *tileIndex, prefix string) (pyramidArchive, io.Closer, error) {
	rc, err := s.deps.Blobs.Open(ctx, p.tiles.File.SHA256)
	if err != nil {
		return pyramidArchive{}, nil, err
	}
	return pyramidArchive{idx: idx, prefix: prefix, ra: kit.ReaderAt(rc), decoded: s.images.tiles, spare: s.images.trySlot}, rc, nil
}

// isGray reports whether a pyramid's tiles are grayscale JPEGs, from the
// header of its smallest level's first tile, kept in idx once read.
func (s *Handler) isGray(ctx context.Context, p *iiifPage, idx *tileIndex, info *shelfmark.TileInfo, prefix string) (bool, error) {
	idx.mu.Lock()
	g, ok := idx.gray[prefix]
	idx.mu.Unlock()
	if ok {
		return g, nil
	}
	tw, th, scales := tileSide(info)
	if len(scales) == 0 {
		return false, nil
	}
	e, ok := idx.entries[prefix+tileName(info, tw, th, scales[0], 0, 0)]
	if !ok {
		return false, nil
	}
	rc, err := s.deps.Blobs.Open(ctx, p.tiles.File.SHA256)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	cfg, err := jpeg.DecodeConfig(io.NewSectionReader(kit.ReaderAt(rc), e.offset, e.size))
	if err != nil {
		return false, fmt.Errorf("tiles %s: %w", idx.sha, err)
	}
	g = cfg.ColorModel == color.GrayModel
	idx.mu.Lock()
	if idx.gray == nil {
		idx.gray = map[string]bool{}
	}
	idx.gray[prefix] = g
	idx.mu.Unlock()
	return g, nil
}
