//go:build nolibjpeg

package libjpeg

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
)

// Turbo reports whether the package was built with libjpeg-turbo; false
// here, under the nolibjpeg tag: image/jpeg does the work.
const Turbo = false

// decode decodes all of data with image/jpeg, whatever part r asks for.
func decode(data []byte, r image.Rectangle, maxPixels int) (image.Image, error) {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if cfg.Width*cfg.Height > maxPixels {
		return nil, fmt.Errorf("%d × %d: %w", cfg.Width, cfg.Height, ErrTooLarge)
	}
	m, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if y, ok := m.(*image.YCbCr); ok {
		c := image.NewRGBA(y.Rect)
		draw.Draw(c, c.Rect, y, y.Rect.Min, draw.Src)
		return c, nil
	}
	return m, nil
}

// encode encodes m with image/jpeg.
func encode(m image.Image, quality int) ([]byte, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: quality}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
