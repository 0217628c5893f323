package herdrstate

// idAlphabet is the digit set of Herdr's public ids: bijective base 32
// without I, L, O and U.
const idAlphabet = "123456789ABCDEFGHJKMNPQRSTVWXYZ0"

// EncodeNumber writes n ≥ 1 in Herdr's bijective base-32 id form
// (1 → "1", 32 → "0", 33 → "11").
func EncodeNumber(n uint64) string {
	if n == 0 {
		return ""
	}
	var buf [16]byte
	i := len(buf)
	for n > 0 {
		n--
		i--
		buf[i] = idAlphabet[n%32]
		n /= 32
	}
	return string(buf[i:])
}

// DecodeNumber parses an id number written by EncodeNumber.
func DecodeNumber(s string) (uint64, bool) {
	if s == "" || len(s) > 12 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := -1
		for j := 0; j < len(idAlphabet); j++ {
			if idAlphabet[j] == s[i] {
				d = j
				break
			}
		}
		if d < 0 {
			return 0, false
		}
		n = n*32 + uint64(d) + 1
	}
	return n, true
}
