package watch

// ObjectID names one object across resources, as "deployments.apps demo/web" (resource, as
// discovery.Resource.String writes it, then namespace/name; the namespace is empty for a
// cluster-scoped object). It is the one key every stage that follows objects uses.
func ObjectID(resource, namespace, name string) string {
	return resource + " " + namespace + "/" + name
}

// ObjectID is the ObjectID of the event's object.
func (e *Event) ObjectID() string { return ObjectID(e.Resource.String(), e.Namespace, e.Name) }
