package recording

import (
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// ownerRecord is one link of an owner chain in the JSON contract.
type ownerRecord struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	UID  string `json:"uid"`
}

func ownersOf(os []watch.Owner) []ownerRecord {
	if len(os) == 0 {
		return nil
	}
	out := make([]ownerRecord, len(os))
	for i, o := range os {
		out[i] = ownerRecord(o)
	}
	return out
}

func ownersFrom(rs []ownerRecord) []watch.Owner {
	if len(rs) == 0 {
		return nil
	}
	out := make([]watch.Owner, len(rs))
	for i, r := range rs {
		out[i] = watch.Owner(r)
	}
	return out
}
