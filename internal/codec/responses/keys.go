package responses

import "encoding/json"

// eachKey calls fn with every top-level key of obj and its value's bytes,
// in order, without copying: the decoder looks at the keys of every input
// item and content part, and a map per item would cost the body's size
// again. obj must be valid JSON (json.Unmarshal has accepted it); anything
// but an object calls fn for nothing.
func eachKey(obj []byte, fn func(key, val []byte)) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return
		}
		end := skipString(obj, i)
		rawKey := obj[i:end]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return
		}
		i = skipSpace(obj, i+1)
		vend := skipValue(obj, i)
		fn(keyOf(rawKey), obj[i:vend])
		i = skipSpace(obj, vend)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i++
	}
}

// eachElem calls fn with every element of the JSON array arr, as eachKey
// does with an object's values.
func eachElem(arr []byte, fn func(val []byte)) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return
	}
	for i < len(arr) {
		i = skipSpace(arr, i)
		end := skipValue(arr, i)
		fn(arr[i:end])
		i = skipSpace(arr, end)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i++
	}
}

// keyOf returns a quoted key's text, decoded as encoding/json does (into
// a copy) only when it has escapes or bytes beyond ASCII.
func keyOf(quoted []byte) []byte {
	for _, c := range quoted {
		if c == '\\' || c >= 0x80 {
			var s string
			_ = json.Unmarshal(quoted, &s)
			return []byte(s)
		}
	}
	return quoted[1 : len(quoted)-1]
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}
