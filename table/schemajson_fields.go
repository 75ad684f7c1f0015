package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// jsonFields is a decoded JSON object whose getters report errors naming the
// file and the key. Schema and snapshot files are read through it so absent
// keys, explicit nulls and wrong types are told apart.
type jsonFields struct {
	file string
	m    map[string]json.RawMessage
}

func parseJSONObject(file string, data []byte) (jsonFields, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return jsonFields{}, fmt.Errorf("%s: not a JSON object: %w", file, err)
	}
	if m == nil {
		return jsonFields{}, fmt.Errorf("%s: not a JSON object: null", file)
	}
	return jsonFields{file: file, m: m}, nil
}

func (f jsonFields) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s: field %q: %s", f.file, key, fmt.Sprintf(format, args...))
}

// present reports whether key exists with a non-null value.
func (f jsonFields) present(key string) bool {
	raw, ok := f.m[key]
	return ok && !isJSONNull(raw)
}

func isJSONNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func (f jsonFields) requireInt(key string) (int64, error) {
	if !f.present(key) {
		return 0, f.errorf(key, "missing")
	}
	return f.int(key)
}

// int decodes an integer; a quoted integer is accepted like Jackson's asLong.
func (f jsonFields) int(key string) (int64, error) {
	raw := bytes.TrimSpace(f.m[key])
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, f.errorf(key, "%v", err)
		}
		raw = []byte(s)
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, f.errorf(key, "not a 64-bit integer: %.40s", raw)
	}
	return n, nil
}

// optInt returns nil when key is absent or null.
func (f jsonFields) optInt(key string) (*int64, error) {
	if !f.present(key) {
		return nil, nil
	}
	n, err := f.int(key)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func (f jsonFields) requireString(key string) (string, error) {
	if !f.present(key) {
		return "", f.errorf(key, "missing")
	}
	return f.str(key)
}

func (f jsonFields) str(key string) (string, error) {
	var s string
	if err := json.Unmarshal(f.m[key], &s); err != nil {
		return "", f.errorf(key, "not a string: %v", err)
	}
	return s, nil
}

// optString returns nil when key is absent or null.
func (f jsonFields) optString(key string) (*string, error) {
	if !f.present(key) {
		return nil, nil
	}
	s, err := f.str(key)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

func (f jsonFields) stringArray(key string) ([]string, error) {
	if !f.present(key) {
		return nil, f.errorf(key, "missing")
	}
	var out []string
	if err := json.Unmarshal(f.m[key], &out); err != nil {
		return nil, f.errorf(key, "not an array of strings: %v", err)
	}
	return out, nil
}

func (f jsonFields) array(key string) ([]json.RawMessage, error) {
	if !f.present(key) {
		return nil, f.errorf(key, "missing")
	}
	var out []json.RawMessage
	if err := json.Unmarshal(f.m[key], &out); err != nil {
		return nil, f.errorf(key, "not an array: %v", err)
	}
	return out, nil
}

// stringMap decodes an object of scalars; non-string scalars keep their JSON
// text, as Jackson's asText does.
func (f jsonFields) stringMap(key string) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(f.m[key], &raw); err != nil {
		return nil, f.errorf(key, "not an object: %v", err)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		v = bytes.TrimSpace(v)
		if len(v) > 0 && v[0] == '"' {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, f.errorf(key, "entry %q: %v", k, err)
			}
			out[k] = s
			continue
		}
		if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
			return nil, f.errorf(key, "entry %q is not a scalar", k)
		}
		out[k] = string(v)
	}
	return out, nil
}
