package top

import (
	"cmp"
	"slices"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
)

// TotalAPI adds up every resource's API figures: what the whole scan cost the API server.
func TotalAPI(snaps []apistats.Snapshot) apistats.Snapshot {
	t := apistats.Snapshot{Resource: "all resources"}
	reqs := map[apistats.Request]int{}
	for _, s := range snaps {
		for _, q := range s.Requests {
			reqs[apistats.Request{Verb: q.Verb, Code: q.Code}] += q.Count
		}
		t.Lists += s.Lists
		t.ListPages += s.ListPages
		t.StreamingLists += s.StreamingLists
		t.BytesReceived += s.BytesReceived
		t.BytesDecoded += s.BytesDecoded
		t.CompressedResponses += s.CompressedResponses
		t.Objects += s.Objects
		t.Bookmarks += s.Bookmarks
		t.WatchStreams += s.WatchStreams
		t.Reconnects += s.Reconnects
		t.WatchOpen += s.WatchOpen
		t.WatchesClosed += s.WatchesClosed
		t.WatchLivedTotal += s.WatchLivedTotal
		t.WatchLivedMax = max(t.WatchLivedMax, s.WatchLivedMax)
		t.Throttled += s.Throttled
		t.RetryAfter = max(t.RetryAfter, s.RetryAfter)
		t.ClientWaits += s.ClientWaits
		t.ClientWait += s.ClientWait
		t.ClientWaitMax = max(t.ClientWaitMax, s.ClientWaitMax)
		t.Elapsed = max(t.Elapsed, s.Elapsed)
	}
	for q, n := range reqs {
		q.Count = n
		t.Requests = append(t.Requests, q)
	}
	slices.SortFunc(t.Requests, func(a, b apistats.Request) int {
		return cmp.Or(cmp.Compare(a.Verb, b.Verb), cmp.Compare(a.Code, b.Code))
	})
	return t
}
