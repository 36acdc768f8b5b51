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
// An object waiting in the queue is not packed yet: the queue holds at most listPrepQueue, and
// the tap waits for room (the preparer falling behind slows the receiving, it does not grow
// the memory).
type listPrep struct {
	mu    sync.Mutex
	queue []*compactObject
	// slots has an element per object queued and not yet read.
	slots chan struct{}
	wake  chan struct{}
	stop  chan struct{}
	// done carries what was read once the goroutine stopped.
	done chan listRead
}

// listRead is what the list's preparer read, in the order it read it; each object it read
// holds its position (compactObject.listRead). A map keyed by the object was 1.7 MiB allocated
// as it grew for 20,000 ConfigMaps (0.7 MiB held), where this is 0.3 MiB.
type listRead []Prepared

// of returns what was read of c (nil: c is nil or was not read).
func (r listRead) of(c *compactObject) Prepared {
	if c == nil || c.listRead == 0 || int(c.listRead) > len(r) {
		return nil
	}
	return r[c.listRead-1]
}

// listPrepQueue is the most objects waiting for the list's preparer: 256 ConfigMaps of 1 KiB
// are 256 KiB, a quarter of it more than packed.
const listPrepQueue = 256

// prepareReceived hands c, an object of the initial streaming list not yet packed, to the
// list's preparer, starting it with the first, and says whether it did. The preparer reads c,
// then packs it (pack.go): the receiving goroutine neither codes nor reads the list's objects,
// and no object is unpacked to be read. Its caller packs an object it did not take.
// --drop-managed-fields rewrites the objects' bytes as the list is stored: its objects are
// not taken.
func (ri *resourceInformer) prepareReceived(c *compactObject) bool {
	if ri.prepare == nil || c.codec != compactProtobuf || c.packed || ri.cfg.DropManagedFields || ri.hasSynced.Load() {
		return false
	}
	ri.prepMu.Lock()
	lp := ri.listPrep
	if lp == nil {
		lp = &listPrep{slots: make(chan struct{}, listPrepQueue), wake: make(chan struct{}, 1),
			stop: make(chan struct{}), done: make(chan listRead, 1)}
		ri.listPrep = lp
		ri.wg.Add(1)
		go lp.run(ri)
	}
	ri.prepMu.Unlock()
	select {
	case lp.slots <- struct{}{}:
	case <-lp.stop:
		return false
	case <-ri.ctx.Done():
		return false
	}
	lp.mu.Lock()
	lp.queue = append(lp.queue, c)
	lp.mu.Unlock()
	select {
	case lp.wake <- struct{}{}:
	default:
	}
	return true
}

func (lp *listPrep) run(ri *resourceInformer) {
	defer ri.wg.Done()
	var results listRead
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
				results = append(results, p)
				c.listRead = uint32(len(results))
			}
			c.packReceived()
			batch[i] = nil
			<-lp.slots
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

// takePrepared stops the list's preparer and returns what it read (nil when none ran). The
// objects it did not reach are left to pack (packLater): emitListed packs each once its line's
// object was read.
func (ri *resourceInformer) takePrepared() listRead {
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
