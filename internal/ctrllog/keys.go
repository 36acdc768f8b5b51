package ctrllog

import (
	"fmt"
	"sort"
	"strings"
)

// Keys names the keys a structured log (JSON, logfmt) keeps the parts of a line under, for a
// log whose keys are none of those found by themselves (--controller-log-keys). An empty key
// leaves that part to be found by itself.
type Keys struct {
	Message, Level, Time, Logger, Controller, ReconcileID, Namespace, Name, Kind, Error string
}

// keyRoles are the parts --controller-log-keys names, in the order its help lists them.
var keyRoles = []string{"message", "level", "time", "logger", "controller", "reconcileID", "namespace", "name", "kind", "error"}

// field returns the Keys field of a role.
func (k *Keys) field(role string) *string {
	switch role {
	case "message":
		return &k.Message
	case "level":
		return &k.Level
	case "time":
		return &k.Time
	case "logger":
		return &k.Logger
	case "controller":
		return &k.Controller
	case "reconcileID":
		return &k.ReconcileID
	case "namespace":
		return &k.Namespace
	case "name":
		return &k.Name
	case "kind":
		return &k.Kind
	case "error":
		return &k.Error
	}
	return nil
}

// KeyRoles lists the parts a Keys names, as ParseKeys takes them.
func KeyRoles() []string { return append([]string(nil), keyRoles...) }

// ParseKeys reads PART=KEY[,PART=KEY...] (message=msg,time=@timestamp): each PART one of
// KeyRoles (case-insensitive), once; KEY the log's key, as it is spelled.
func ParseKeys(s string) (Keys, error) {
	var k Keys
	seen := map[string]bool{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		role, key, ok := strings.Cut(pair, "=")
		role, key = strings.TrimSpace(role), strings.TrimSpace(key)
		if !ok || role == "" {
			return Keys{}, fmt.Errorf("%q is not PART=KEY (e.g. message=msg)", pair)
		}
		canon := ""
		for _, r := range keyRoles {
			if strings.EqualFold(r, role) {
				canon = r
			}
		}
		if canon == "" {
			return Keys{}, fmt.Errorf("unknown part %q: want one of %s", role, strings.Join(keyRoles, ", "))
		}
		if key == "" {
			return Keys{}, fmt.Errorf("%s= names no key", canon)
		}
		if seen[canon] {
			return Keys{}, fmt.Errorf("%s is named twice", canon)
		}
		seen[canon] = true
		*k.field(canon) = key
	}
	if len(seen) == 0 {
		return Keys{}, fmt.Errorf("names no key: want PART=KEY[,PART=KEY...], PART one of %s", strings.Join(keyRoles, ", "))
	}
	return k, nil
}

// String is k as ParseKeys reads it ("" when it names nothing).
func (k Keys) String() string {
	var parts []string
	for _, r := range keyRoles {
		if v := *k.field(r); v != "" {
			parts = append(parts, r+"="+v)
		}
	}
	return strings.Join(parts, ",")
}

// The keys each part is found under when --controller-log-keys does not name it, tried in
// order: those of zap (controller-runtime, production and development encoders and the
// variants operators configure), klog/component-base, logrus, slog, zerolog, pino/bunyan,
// Elastic's ECS.
var (
	messageKeys  = []string{"msg", "message", "Message", "MESSAGE", "M", "@message", "log.message"}
	levelKeys    = []string{"level", "Level", "LEVEL", "lvl", "severity", "Severity", "L", "log.level", "levelname"}
	timeKeys     = []string{"ts", "time", "timestamp", "Time", "Timestamp", "@timestamp", "T"}
	loggerKeys   = []string{"logger", "Logger", "N", "logger_name", "log.logger", "loggerName"}
	reconcileIDs = []string{"reconcileID", "reconcile_id", "reconcileId", "ReconcileID", "reconcileid"}
)

// aliases are other spellings of the keys the reconstruction reads (controller-runtime's): a
// line that has none of the key itself has its value copied under it.
var aliases = map[string][]string{
	"controller":     {"Controller", "controller_name", "controllerName"},
	"reconcileID":    reconcileIDs[1:],
	"controllerKind": {"controller_kind"},
	"error":          {"err", "Error", "error.message"},
}

// roleField is where the reconstruction reads each part named by --controller-log-keys.
var roleField = map[string]string{
	"controller": "controller", "reconcileID": "reconcileID", "namespace": "namespace", "name": "name",
	"kind": "controllerKind", "error": "error", "logger": "logger",
}

// firstKey returns the first of keys m has (named is tried first), and its value.
func firstKey(m map[string]any, named string, keys []string) (string, any) {
	if named != "" {
		if v, ok := lookup(m, named); ok {
			return named, v
		}
	}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return k, v
		}
	}
	return "", nil
}

// lookup finds key in m: as it is, or as a path of nested objects (log.level in {"log":{"level":..}}).
func lookup(m map[string]any, key string) (any, bool) {
	if v, ok := m[key]; ok || !strings.Contains(key, ".") {
		return v, ok
	}
	cur := m
	parts := strings.Split(key, ".")
	for i, p := range parts {
		v, ok := cur[p]
		if !ok {
			return nil, false
		}
		if i == len(parts)-1 {
			return v, true
		}
		if cur, ok = v.(map[string]any); !ok {
			return nil, false
		}
	}
	return nil, false
}

// normalize copies the parts of a line found under other keys (the ones --controller-log-keys
// names, or another spelling) to the keys the reconstruction reads. A named key wins over the
// line's own; an alias only fills a key the line lacks.
func normalize(m map[string]any, k *Keys) {
	if k != nil {
		for _, role := range keyRoles {
			named, field := *k.field(role), roleField[role]
			if named == "" || field == "" || named == field {
				continue
			}
			if v, ok := lookup(m, named); ok {
				m[field] = v
			}
		}
	}
	for field, alts := range aliases {
		if _, has := m[field]; has {
			continue
		}
		for _, a := range alts {
			if v, ok := lookup(m, a); ok {
				m[field] = v
				break
			}
		}
	}
}

// isErrorLevel reports whether a level value is an error or worse: a name in any case (error,
// ERROR, err, dpanic, panic, fatal, critical, alert, emergency, severe), or a number at or
// above pino's and bunyan's 50 (error).
func isErrorLevel(v any) bool {
	switch v := v.(type) {
	case string:
		switch strings.ToLower(v) {
		case "error", "err", "eror", "dpanic", "panic", "fatal", "critical", "crit", "alert", "emerg", "emergency", "severe":
			return true
		}
		return v == "E" || v == "F"
	case float64:
		return v >= 50
	}
	return false
}

// keyList is the sorted keys of m, at most max of them ("..." ends a longer list).
func keyList(m map[string]int, max int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > max {
		keys = append(keys[:max], "...")
	}
	return strings.Join(keys, ", ")
}
