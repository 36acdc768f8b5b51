package recording

import "testing"

// Every type DecodeEvent says it knows has a record to decode into, and no other.
func TestKnownTypesHaveRecords(t *testing.T) {
	for _, typ := range KnownTypes {
		if lineRecords[typ] == nil {
			t.Errorf("%s: no record decodes it", typ)
		}
	}
	if len(lineRecords) != len(KnownTypes) {
		t.Errorf("%d types decode, KnownTypes lists %d", len(lineRecords), len(KnownTypes))
	}
}
