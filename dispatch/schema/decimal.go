package schema

import (
	"encoding/json"
	"strconv"
	"strings"
)

// decimal is an exact form of a JSON number: value = ±0.digits × 10^exp.
// Comparing these lexically avoids both float64 rounding (2^53+1 would equal
// 2^53) and arbitrary-precision arithmetic, whose cost grows with the length
// and exponent of attacker-chosen input.
type decimal struct {
	neg    bool
	digits string // no leading or trailing zeros; empty means zero
	exp    int64
}

// expLimit clamps exponents so that arithmetic on them cannot overflow.
// Numbers at the clamp lose their order among themselves, so a schema may
// not hold one (see clamped); any argument beyond it then still compares
// correctly against every number a schema can hold.
const expLimit = 1 << 60

// parseDecimal reads a number that encoding/json has already accepted, so
// the grammar is trusted and only the structure is extracted.
func parseDecimal(n json.Number) (decimal, bool) {
	s := string(n)
	var d decimal
	if strings.HasPrefix(s, "-") {
		d.neg = true
		s = s[1:]
	}
	mant, expPart := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expPart = s[:i], s[i+1:]
	}
	intPart, fracPart := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, fracPart = mant[:i], mant[i+1:]
	}
	if intPart == "" || !allDigits(intPart) || !allDigits(fracPart) || (strings.Contains(mant, ".") && fracPart == "") {
		return decimal{}, false
	}
	var e int64
	if expPart != "" {
		sign := int64(1)
		switch expPart[0] {
		case '+':
			expPart = expPart[1:]
		case '-':
			sign = -1
			expPart = expPart[1:]
		}
		if expPart == "" || !allDigits(expPart) {
			return decimal{}, false
		}
		v, err := strconv.ParseInt(expPart, 10, 64)
		if err != nil || v > expLimit {
			v = expLimit
		}
		e = sign * v
	}
	all := intPart + fracPart
	point := int64(len(intPart))
	trimmed := strings.TrimLeft(all, "0")
	point -= int64(len(all) - len(trimmed))
	trimmed = strings.TrimRight(trimmed, "0")
	if trimmed == "" {
		return decimal{}, true
	}
	d.digits = trimmed
	d.exp = clampExp(point + e)
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func clampExp(e int64) int64 {
	switch {
	case e > expLimit:
		return expLimit
	case e < -expLimit:
		return -expLimit
	}
	return e
}

func (d decimal) isZero() bool { return d.digits == "" }

// clamped reports an exponent at the limit, where the true value may lie
// further out than the one kept.
func (d decimal) clamped() bool {
	return !d.isZero() && (d.exp >= expLimit || d.exp <= -expLimit)
}

// isInteger is exact: 3.0 and 3e0 and 30e-1 are integers, 3.5 is not.
func (d decimal) isInteger() bool {
	return d.isZero() || int64(len(d.digits)) <= d.exp
}

// cmp returns -1, 0 or +1 as d is less than, equal to or greater than o.
func (d decimal) cmp(o decimal) int {
	ds, osg := d.sign(), o.sign()
	if ds != osg {
		if ds < osg {
			return -1
		}
		return 1
	}
	if ds == 0 {
		return 0
	}
	c := cmpMagnitude(d, o)
	if ds < 0 {
		return -c
	}
	return c
}

func (d decimal) sign() int {
	switch {
	case d.isZero():
		return 0
	case d.neg:
		return -1
	}
	return 1
}

func cmpMagnitude(a, b decimal) int {
	switch {
	case a.exp < b.exp:
		return -1
	case a.exp > b.exp:
		return 1
	}
	// Same leading position: with trailing zeros stripped, digit strings
	// compare lexicographically, a shorter prefix being the smaller value.
	return strings.Compare(a.digits, b.digits)
}
