//go:build !nolibjpeg

package libjpeg

/*
#cgo LDFLAGS: -ljpeg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

// sm_error makes libjpeg's fatal errors return to the call that failed
// (longjmp) instead of exiting the process, and keeps the first message,
// of an error or a warning.
typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	char msg[JMSG_LENGTH_MAX];
} sm_error;

static void sm_error_exit(j_common_ptr c) {
	sm_error *e = (sm_error *)c->err;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jump, 1);
}

// sm_output_message is called for the first warning (corrupt or
// truncated data): it keeps its text and prints nothing.
static void sm_output_message(j_common_ptr c) {
	sm_error *e = (sm_error *)c->err;
	if (e->msg[0] == 0) {
		(*c->err->format_message)(c, e->msg);
	}
}

static void sm_errors(sm_error *e) {
	jpeg_std_error(&e->pub);
	e->pub.error_exit = sm_error_exit;
	e->pub.output_message = sm_output_message;
	e->msg[0] = 0;
}

// sm_decode reads a JPEG's header: its size and colour space; then,
// unless out is NULL, decodes it into out, gray (one byte a pixel) or
// RGBA (four), rows stride bytes apart, if it is still *w × *h: only
// rows y0 to y1 (excluded), and of them at least columns x0 to x1, as
// libjpeg crops them (to whole blocks): *ox and *ow are the columns
// decoded, row y0 going to out's first row and column c to byte c ×
// (1 or 4) of a row. The rows after y1 are not decoded at all. It
// returns -1 on an error, -2 when libjpeg warned (the image is then
// incomplete).
static int sm_decode(const unsigned char *data, unsigned long len, unsigned char *out, int stride, int *w, int *h, int *space, int gray,
	int x0, int y0, int x1, int y1, int *ox, int *ow, char *msg) {
	struct jpeg_decompress_struct d;
	sm_error e;
	int warned, bpp = gray ? 1 : 4;
	JDIMENSION xoff, width;
	sm_errors(&e);
	d.err = &e.pub;
	d.mem = NULL;
	if (setjmp(e.jump)) {
		jpeg_destroy_decompress(&d);
		memcpy(msg, e.msg, JMSG_LENGTH_MAX);
		return -1;
	}
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, data, len);
	jpeg_read_header(&d, TRUE);
	if (out == NULL) {
		*w = (int)d.image_width;
		*h = (int)d.image_height;
		*space = (int)d.jpeg_color_space;
		jpeg_destroy_decompress(&d);
		return 0;
	}
	if ((int)d.image_width != *w || (int)d.image_height != *h) {
		jpeg_destroy_decompress(&d);
		snprintf(msg, JMSG_LENGTH_MAX, "the image's size changed between two reads");
		return -1;
	}
	d.out_color_space = gray ? JCS_GRAYSCALE : JCS_EXT_RGBA;
	// the chroma is replicated, as image/jpeg does, not interpolated
	// (which also keeps a crop's pixels those of the whole image)
	d.do_fancy_upsampling = FALSE;
	jpeg_start_decompress(&d);
	xoff = (JDIMENSION)x0;
	width = (JDIMENSION)(x1 - x0);
	if (x0 > 0 || x1 < *w) {
		jpeg_crop_scanline(&d, &xoff, &width);
	}
	*ox = (int)xoff;
	*ow = (int)width;
	if (y0 > 0) {
		jpeg_skip_scanlines(&d, (JDIMENSION)y0);
	}
	while (d.output_scanline < (JDIMENSION)y1) {
		JSAMPROW row = out + (size_t)(d.output_scanline - y0) * (size_t)stride + (size_t)xoff * bpp;
		jpeg_read_scanlines(&d, &row, 1);
	}
	if (d.output_scanline < d.output_height) {
		jpeg_abort_decompress(&d);
	} else {
		jpeg_finish_decompress(&d);
	}
	warned = e.pub.num_warnings > 0;
	jpeg_destroy_decompress(&d);
	if (warned) {
		memcpy(msg, e.msg, JMSG_LENGTH_MAX);
		return -2;
	}
	return 0;
}

// sm_dest is a destination that grows a malloc'd buffer, which the
// caller frees: the whole of it is known here whatever fails.
typedef struct {
	struct jpeg_destination_mgr pub;
	unsigned char *buf;
	size_t cap;
} sm_dest;

static void sm_init_destination(j_compress_ptr c) {
	sm_dest *d = (sm_dest *)c->dest;
	d->pub.next_output_byte = d->buf;
	d->pub.free_in_buffer = d->cap;
}

// called when the buffer is full: doubles it
static boolean sm_empty_output_buffer(j_compress_ptr c) {
	sm_dest *d = (sm_dest *)c->dest;
	unsigned char *b = realloc(d->buf, d->cap * 2);
	if (b == NULL) {
		sm_error *e = (sm_error *)c->err;
		snprintf(e->msg, JMSG_LENGTH_MAX, "out of memory for the encoded image");
		longjmp(e->jump, 1);
	}
	d->buf = b;
	d->pub.next_output_byte = b + d->cap;
	d->pub.free_in_buffer = d->cap;
	d->cap *= 2;
	return TRUE;
}

static void sm_term_destination(j_compress_ptr c) { (void)c; }

// sm_encode encodes w × h pixels, gray (one byte a pixel) or RGBA
// (four, alpha ignored) rows stride bytes apart, at quality; *out (to
// free) and *outlen are the JPEG.
static int sm_encode(const unsigned char *pix, int stride, int w, int h, int gray, int quality, unsigned char **out, size_t *outlen, char *msg) {
	struct jpeg_compress_struct c;
	sm_error e;
	sm_dest dest;
	sm_errors(&e);
	c.err = &e.pub;
	c.mem = NULL;
	dest.cap = (size_t)w * (size_t)h / 4 + 4096;
	dest.buf = malloc(dest.cap);
	*out = NULL;
	*outlen = 0;
	if (dest.buf == NULL) {
		snprintf(msg, JMSG_LENGTH_MAX, "out of memory");
		return -1;
	}
	if (setjmp(e.jump)) {
		jpeg_destroy_compress(&c);
		free(dest.buf);
		memcpy(msg, e.msg, JMSG_LENGTH_MAX);
		return -1;
	}
	jpeg_create_compress(&c);
	dest.pub.init_destination = sm_init_destination;
	dest.pub.empty_output_buffer = sm_empty_output_buffer;
	dest.pub.term_destination = sm_term_destination;
	c.dest = &dest.pub;
	c.image_width = (JDIMENSION)w;
	c.image_height = (JDIMENSION)h;
	c.input_components = gray ? 1 : 4;
	c.in_color_space = gray ? JCS_GRAYSCALE : JCS_EXT_RGBA;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, quality, TRUE);
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < c.image_height) {
		JSAMPROW row = (JSAMPROW)(pix + (size_t)c.next_scanline * (size_t)stride);
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	*outlen = dest.cap - dest.pub.free_in_buffer;
	*out = dest.buf;
	jpeg_destroy_compress(&c);
	return 0;
}
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"unsafe"
)

// Turbo reports whether the package was built with libjpeg-turbo: true
// here; false under the nolibjpeg tag, where image/jpeg does the work.
const Turbo = true

// subImager is an image that shares its pixels with its parts.
type subImager interface {
	image.Image
	SubImage(image.Rectangle) image.Image
}

// decode decodes the rows of data that r covers with libjpeg-turbo
// (columns cropped to whole blocks), or all of it with image/jpeg for the
// colour spaces libjpeg does not convert to RGB; r is within the image,
// or empty for all of it.
func decode(data []byte, r image.Rectangle, maxPixels int) (image.Image, error) {
	if len(data) == 0 {
		return nil, errors.New("no data")
	}
	var w, h, space, ox, ow C.int
	var msg [C.JMSG_LENGTH_MAX]C.char
	p := (*C.uchar)(unsafe.Pointer(&data[0]))
	n := C.ulong(len(data))
	if C.sm_decode(p, n, nil, 0, &w, &h, &space, 0, 0, 0, 0, 0, &ox, &ow, &msg[0]) != 0 {
		return nil, errors.New(C.GoString(&msg[0]))
	}
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("an image of %d × %d", w, h)
	}
	if int64(w)*int64(h) > int64(maxPixels) {
		return nil, fmt.Errorf("%d × %d: %w", w, h, ErrTooLarge)
	}
	full := image.Rect(0, 0, int(w), int(h))
	if r = r.Intersect(full); r.Empty() {
		r = full
	}
	// the rows asked for, as wide as the image: the crop's columns are
	// known only once libjpeg has rounded them to its blocks
	rows := image.Rect(0, r.Min.Y, int(w), r.Max.Y)
	var (
		m      subImager
		pix    []byte
		stride int
		gray   C.int
	)
	switch space {
	case C.JCS_GRAYSCALE:
		g := image.NewGray(rows)
		m, pix, stride, gray = g, g.Pix, g.Stride, 1
	case C.JCS_YCbCr, C.JCS_RGB:
		c := image.NewRGBA(rows)
		m, pix, stride = c, c.Pix, c.Stride
	default:
		return jpeg.Decode(bytes.NewReader(data))
	}
	if C.sm_decode(p, n, (*C.uchar)(unsafe.Pointer(&pix[0])), C.int(stride), &w, &h, &space, gray,
		C.int(r.Min.X), C.int(r.Min.Y), C.int(r.Max.X), C.int(r.Max.Y), &ox, &ow, &msg[0]) != 0 {
		return nil, errors.New(C.GoString(&msg[0]))
	}
	if rows.Min.X == int(ox) && rows.Max.X == int(ox+ow) {
		return m, nil
	}
	return m.SubImage(image.Rect(int(ox), rows.Min.Y, int(ox+ow), rows.Max.Y)), nil
}

// encode encodes m with libjpeg-turbo.
func encode(m image.Image, quality int) ([]byte, error) {
	var (
		pix          []byte
		stride, gray int
	)
	r := m.Bounds()
	switch m := m.(type) {
	case *image.Gray:
		pix, stride, gray = m.Pix[m.PixOffset(r.Min.X, r.Min.Y):], m.Stride, 1
	case *image.RGBA:
		pix, stride = m.Pix[m.PixOffset(r.Min.X, r.Min.Y):], m.Stride
	default:
		c := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
		draw.Draw(c, c.Rect, m, r.Min, draw.Src)
		pix, stride = c.Pix, c.Stride
	}
	var (
		out *C.uchar
		n   C.size_t
		msg [C.JMSG_LENGTH_MAX]C.char
	)
	if C.sm_encode((*C.uchar)(unsafe.Pointer(&pix[0])), C.int(stride), C.int(r.Dx()), C.int(r.Dy()), C.int(gray), C.int(quality), &out, &n, &msg[0]) != 0 {
		return nil, errors.New(C.GoString(&msg[0]))
	}
	defer C.free(unsafe.Pointer(out))
	return C.GoBytes(unsafe.Pointer(out), C.int(n)), nil
}
