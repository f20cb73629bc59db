package convert

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Unit tables for byte quantities; each dialect names its own.
var (
	// SkaliBytes: decimal B/KB/MB/GB/TB and binary KiB/MiB/GiB/TiB; bare G is invalid.
	SkaliBytes = map[string]int64{"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
	// KubernetesBytes: Kubernetes quantities as hakopod accepts them.
	KubernetesBytes = map[string]int64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
	// CgroupBytes: ply's mem values are written to cgroup v2 memory.max, where
	// K, M, G and T are powers of 1024.
	CgroupBytes = map[string]int64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40,
		"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
)

// Bytes parses a byte quantity with one of the unit tables. Fractions are
// allowed when they come out to whole bytes.
func Bytes(s string, units map[string]int64) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	factor, ok := units[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("%q is not a byte quantity (number followed by one of %s)", s, unitList(units))
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("%q is not a byte quantity", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(factor))
	if !r.IsInt() || r.Sign() <= 0 || !r.Num().IsInt64() {
		return 0, fmt.Errorf("%q is not a positive whole number of bytes", s)
	}
	return r.Num().Int64(), nil
}

func unitList(units map[string]int64) string {
	var names []string
	for u := range units {
		if u != "" {
			names = append(names, u)
		}
	}
	sortStrings(names)
	return strings.Join(names, ", ")
}

// CPUMillis parses CPU as decimal cores ("1.5", 0.25) or, when allowMilli,
// Kubernetes millicores ("250m").
func CPUMillis(v any, allowMilli bool) (int64, error) {
	text, ok := ScalarText(v)
	if !ok {
		return 0, fmt.Errorf("expected CPU cores, got %s", TypeName(v))
	}
	text = strings.TrimSpace(text)
	if allowMilli && strings.HasSuffix(text, "m") {
		n, err := parseDecimal(strings.TrimSuffix(text, "m"), 1)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a whole positive number of millicores", text)
		}
		return n, nil
	}
	n, err := parseDecimal(text, 1000)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive number of CPU cores with at most three decimals", text)
	}
	return n, nil
}

// parseDecimal multiplies a non-negative decimal by factor and requires a
// whole result.
func parseDecimal(s string, factor int64) (int64, error) {
	if s == "" || strings.ContainsAny(s, "eE+-_") {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(factor))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	return r.Num().Int64(), nil
}

// Seconds parses a duration written as one or more number+unit pairs (ns,
// us or µs, ms, s, m, h, d, w), such as 30s, 5m, 1h30m or 1.5s, and rounds up
// to whole seconds, since every native duration is in seconds and rounding
// down could make a budget 0. It accepts Go's time.ParseDuration units (which
// gordon uses) and the d and w of skali's durations.
func Seconds(s string) (int64, error) {
	s = strings.NewReplacer("µs", "us", "μs", "us").Replace(strings.TrimSpace(s))
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var totalMS float64
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && rest[j] >= 'a' && rest[j] <= 'z' {
			j++
		}
		num, unit := rest[:i], rest[i:j]
		var n float64
		if _, err := fmt.Sscanf(num, "%g", &n); err != nil || num == "" {
			return 0, fmt.Errorf("%q is not a duration such as 30s, 5m or 1h", s)
		}
		mult, ok := map[string]float64{"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3, "m": 60e3, "h": 3600e3, "d": 86400e3, "w": 7 * 86400e3}[unit]
		if !ok {
			return 0, fmt.Errorf("%q is not a duration such as 30s, 5m or 1h (units ns, us, ms, s, m, h, d, w)", s)
		}
		totalMS += n * mult
		rest = rest[j:]
	}
	if totalMS > 1e15 {
		return 0, fmt.Errorf("%q is too long", s)
	}
	return int64(math.Ceil(totalMS / 1000)), nil
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
