package chart

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"
)

// Point is one value at one time; OK false is a gap (no sample).
type Point struct {
	At time.Time
	V  float64
	OK bool
}

// Spec is one chart: a series over [From, To).
type Spec struct {
	// Title names the chart for people and screen readers ("CPU of web").
	Title string
	// Key identifies the series for tests (data-series).
	Key    string
	From   time.Time
	To     time.Time
	Points []Point
	// Format writes a value with its unit ("0.25 cores", "12 MiB").
	Format func(float64) string
	// Class picks the line's colour (chart-line-<Class> in the stylesheet).
	Class string
	// Floor is the least the y axis reaches up to, so an idle series
	// does not look busy (0: no floor).
	Floor float64
}

// Size of the drawing, in SVG user units; it scales with the page.
const (
	width  = 240
	height = 64
	padTop = 4
	padBot = 2
)

// SVG returns the chart as an <svg> element. The last value and the
// axis maximum are in its caption and data attributes.
func SVG(s Spec) string {
	format := s.Format
	if format == nil {
		format = func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
	}
	top := s.Floor
	last, hasLast := 0.0, false
	for _, p := range s.Points {
		if p.OK {
			top = math.Max(top, p.V)
			last, hasLast = p.V, true
		}
	}
	if top <= 0 {
		top = 1
	}
	span := s.To.Sub(s.From).Seconds()
	x := func(t time.Time) float64 {
		if span <= 0 {
			return 0
		}
		return math.Max(0, math.Min(width, t.Sub(s.From).Seconds()/span*width))
	}
	y := func(v float64) float64 {
		return padTop + (height-padTop-padBot)*(1-v/top)
	}
	// A gap longer than two steps breaks the line.
	step := span
	if n := len(s.Points); n > 1 {
		step = s.Points[n-1].At.Sub(s.Points[0].At).Seconds() / float64(n-1)
	}
	var paths []string
	var cur []string
	var prev time.Time
	flush := func() {
		if len(cur) == 1 { // a lone point: a short tick, so it shows
			cur = append(cur, cur[0])
		}
		if len(cur) > 0 {
			paths = append(paths, "M"+strings.Join(cur, "L"))
		}
		cur = nil
	}
	for _, p := range s.Points {
		if !p.OK {
			flush()
			continue
		}
		if len(cur) > 0 && p.At.Sub(prev).Seconds() > 2.5*step {
			flush()
		}
		cur = append(cur, fmt.Sprintf("%.1f,%.1f", x(p.At), y(p.V)))
		prev = p.At
	}
	flush()

	lastText := "no data"
	if hasLast {
		lastText = format(last)
	}
	var b strings.Builder
	title := html.EscapeString(s.Title)
	fmt.Fprintf(&b, `<figure class="chart" data-testid="chart" data-series="%s" data-points="%d" data-last="%s">`,
		html.EscapeString(s.Key), countOK(s.Points), html.EscapeString(strconv.FormatFloat(last, 'g', 6, 64)))
	fmt.Fprintf(&b, `<figcaption><span class="chart-title">%s</span> <span class="chart-value" data-testid="chart-value">%s</span></figcaption>`,
		title, html.EscapeString(lastText))
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="%s, latest %s, peak %s" class="chart-svg">`,
		width, height, title, html.EscapeString(lastText), html.EscapeString(format(top)))
	fmt.Fprintf(&b, `<line class="chart-axis" x1="0" y1="%d" x2="%d" y2="%d"/>`, height-padBot, width, height-padBot)
	for _, d := range paths {
		fmt.Fprintf(&b, `<path class="chart-line chart-line-%s" d="%s"/>`, html.EscapeString(s.Class), d)
	}
	b.WriteString(`</svg>`)
	fmt.Fprintf(&b, `<div class="chart-scale"><span>peak %s</span><span>%s – %s</span></div>`,
		html.EscapeString(format(top)), s.From.UTC().Format("15:04"), s.To.UTC().Format("15:04 UTC"))
	b.WriteString(`</figure>`)
	return b.String()
}

func countOK(ps []Point) int {
	n := 0
	for _, p := range ps {
		if p.OK {
			n++
		}
	}
	return n
}

// Units.

// Cores formats CPU use.
func Cores(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " cores" }

// Bytes formats a size in binary units.
func Bytes(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}

// BytesPerSecond formats a transfer rate.
func BytesPerSecond(v float64) string { return Bytes(v) + "/s" }

// PerSecond formats a request rate.
func PerSecond(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "/s" }

// Millis formats a latency in milliseconds.
func Millis(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " ms" }

// Count formats a whole number.
func Count(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
