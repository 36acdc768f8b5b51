// Package redact keeps credentials out of everything the plugin shows or stores: URLs with a
// password or a token in them, and the -v logs of client-go, which at -v=7 and above write the raw
// bytes of a port-forward tunnel (a plain-HTTP scrape request, its Authorization header
// included) and full request URLs.
package redact

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces a secret.
const Mask = "xxxxx"

// secretParam matches the names of query parameters that carry credentials (access_token,
// token, api_key, password, X-Amz-Signature, sig, ...).
var secretParam = regexp.MustCompile(`(?i)(token|secret|passw|pwd|key|auth|sig|credential|session|bearer|jwt)`)

// URL returns raw with its password and every credential-bearing query value replaced by
// xxxxx, so that it can be shown, logged and recorded. Text that is not a URL is returned as
// Text would return it.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return Text(raw)
	}
	return urlString(u)
}

func urlString(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), Mask)
		} else if c.User.Username() != "" {
			// user@host carries a credential too when the "user" is a token (https://TOKEN@host).
			c.User = url.User(Mask)
		}
	}
	if c.RawQuery != "" {
		c.RawQuery = Query(c.RawQuery)
	}
	return c.String()
}

// Query masks the values of credential-bearing parameters in a raw query string, keeping its
// order and every other parameter as it was.
func Query(raw string) string {
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		name, _, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if secretParam.MatchString(name) {
			parts[i] = p[:strings.IndexByte(p, '=')+1] + Mask
		}
	}
	return strings.Join(parts, "&")
}

var (
	// userinfo in any URL inside free text: scheme://user:password@
	textUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)([^/?#@\s"']*)@`)
	// a credential-bearing query parameter inside free text.
	textParam = regexp.MustCompile(`(?i)([?&;](?:[^=&\s"']*(?:token|secret|passw|pwd|key|auth|sig|credential|session|bearer|jwt)[^=&\s"']*)=)[^&\s"'#]*`)
	// an Authorization or Proxy-Authorization header, or a Cookie, in a raw HTTP request or a log.
	textHeader = regexp.MustCompile(`(?i)((?:proxy-)?authorization|cookie|x-api-key)(["']?\s*[:=]\s*\[?["']?)[^\r\n"'\]]*`)
	// a bearer token anywhere.
	textBearer = regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+`)
	// a JSON Web Token anywhere (service account tokens are ones).
	textJWT = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
)

// Text masks every credential found in free text: passwords in URLs, credential-bearing query
// parameters, Authorization and Cookie header values, bearer tokens and JWTs.
func Text(s string) string {
	if !mayHold(s) {
		return s
	}
	s = textUserinfo.ReplaceAllStringFunc(s, func(m string) string {
		sub := textUserinfo.FindStringSubmatch(m)
		if sub[2] == "" {
			return m
		}
		user, _, hasPass := strings.Cut(sub[2], ":")
		if hasPass {
			return sub[1] + user + ":" + Mask + "@"
		}
		return sub[1] + Mask + "@"
	})
	s = textParam.ReplaceAllString(s, "${1}"+Mask)
	s = textHeader.ReplaceAllString(s, "${1}${2}"+Mask)
	s = textBearer.ReplaceAllString(s, "${1}"+Mask)
	return textJWT.ReplaceAllString(s, Mask)
}

// mayHold reports whether s may hold a credential Text masks: each pattern needs an '@', a '=',
// a ':', "eyJ" or "bearer" (a log's controller and object names have none, and are passed on
// without a regular expression run on them).
func mayHold(s string) bool {
	if strings.ContainsAny(s, "@=:") || strings.Contains(s, "eyJ") {
		return true
	}
	for i := strings.IndexAny(s, "bB"); i >= 0 && i+6 <= len(s); {
		if strings.EqualFold(s[i:i+6], "bearer") {
			return true
		}
		n := strings.IndexAny(s[i+1:], "bB")
		if n < 0 {
			break
		}
		i += 1 + n
	}
	return false
}

// Value returns a log value with its credentials masked: strings, byte slices, errors and
// Stringers are masked as text; numbers, booleans and durations pass as they are; anything else
// (maps, structs, headers) is formatted and masked.
func Value(v any) any {
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return v
	case string:
		return Text(x)
	case []byte:
		// Raw bytes in a log are wire data (client-go's port-forward tunnel logs every byte it
		// carries): a request's headers, a response's body. No pattern can find every secret
		// in them, so they are never logged, only counted.
		return fmt.Sprintf("[%d bytes, not logged]", len(x))
	case *url.URL:
		if x == nil {
			return v
		}
		return urlString(x)
	case error:
		return Text(x.Error())
	case fmt.Stringer:
		return Text(x.String())
	}
	return Text(fmt.Sprintf("%+v", v))
}
