package dashgen

// A capacity belongs to the identity its ladder was measured on
// (llmprobe_ladder_identity_info: the model and version when the ladder
// began; complete="false" when a deploy or restart cut it, its capacity
// then a lower bound of the old identity). The capacity regression rules
// compare like with like: a capacity by version exists only for a complete
// ladder, labelled with the identity it measured, never with the identity
// the target has now (docs/ladder.md, "A deploy during a ladder").
const ladderIdentity = "llmprobe_ladder_identity_info"

// capacityByVersionExpr labels each capacity with its ladder's identity
// (the most recent, should two overlap across a scrape's lookback). A
// prober that publishes no ladder identity (older than it) has its
// target's identity as last seen (the most recently seen wins if two
// overlap briefly), as before.
func (o RuleOptions) capacityByVersionExpr() string {
	return recCapacity + "\n" +
		"  + on (job, instance, target) group_left (model, version)\n" +
		"  0 * max without (complete, scope) (topk by (job, instance, target) (1, timestamp(" + o.Mixin.sel(ladderIdentity, `complete="true"`) + ")))\n" +
		"or\n" +
		recCapacity + "\n" +
		"  + on (job, instance, target) group_left (model, version)\n" +
		"  0 * topk by (job, instance, target) (1, timestamp(" + o.Mixin.sel("llmprobe_target_info") + "))\n" +
		"  unless on (job, instance, target) " + o.Mixin.sel(ladderIdentity)
}
