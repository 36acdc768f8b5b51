package watch

import "sync"

// listPrep prepares the Added lines of an initial streaming list while the list is received
// (Config.Prepare): the objects are decoded and read on a goroutine of its own as the tap sees
// them arrive, while the server is still sending, instead of after the last one. The lines
// still go out when the list is complete (the informer's Replace), in its order, with what was
// read; an object not read by then is decoded ahead as before.
//
// The queue and the results hold pointers to objects the reflector's list holds anyway, at most
// one of each per object of the list, and what Prepare read of each (a state: a few strings).
type listPrep struct {
	mu    sync.Mutex
	queue []*compactObject
	wake  chan struct{}
	stop  chan struct{}
	// done carries what was read, keyed by the object, once the goroutine stopped.
	done chan map[*compactObject]Prepared
}

// prepareReceived hands c, an object of the initial streaming list, to the list's preparer,
// starting it with the first. A packed object (pack.go) is read after the list, as before: the
// receiving goroutine is busy coding such a kind's objects already, and each read decodes the
// coding first (20,000 ConfigMaps read as received: +12 MiB peak RSS, +10% CPU to sync).
func (ri *resourceInformer) prepareReceived(c *compactObject) {
	if ri.prepare == nil || c.codec != compactProtobuf || c.packed || ri.hasSynced.Load() {
		return
	}
	ri.prepMu.Lock()
	lp := ri.listPrep
	if lp == nil {
		lp = &listPrep{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan map[*compactObject]Prepared, 1)}
		ri.listPrep = lp
		ri.wg.Add(1)
		go lp.run(ri)
	}
	ri.prepMu.Unlock()
	lp.mu.Lock()
	lp.queue = append(lp.queue, c)
	lp.mu.Unlock()
	select {
	case lp.wake <- struct{}{}:
	default:
	}
}

func (lp *listPrep) run(ri *resourceInformer) {
	defer ri.wg.Done()
	results := map[*compactObject]Prepared{}
	defer func() { lp.done <- results }()
	var batch []*compactObject
	for {
		lp.mu.Lock()
		batch, lp.queue = lp.queue, batch[:0]
		lp.mu.Unlock()
		for i, c := range batch {
			select {
			case <-lp.stop:
				return
			case <-ri.ctx.Done():
				return
			default:
			}
			if p := ri.prepared(c); p != nil {
				results[c] = p
			}
			batch[i] = nil
		}
		select {
		case <-lp.wake:
		case <-lp.stop:
			return
		case <-ri.ctx.Done():
			return
		}
	}
}

// takePrepared stops the list's preparer and returns what it read (nil when none ran).
func (ri *resourceInformer) takePrepared() map[*compactObject]Prepared {
	ri.prepMu.Lock()
	lp := ri.listPrep
	ri.listPrep = nil
	ri.prepMu.Unlock()
	if lp == nil {
		return nil
	}
	close(lp.stop)
	return <-lp.done
}
