package answercheck

// Placeholder bodies of the contract: replaced by the judging branch.

// Kind is the check's kind (which of its fields is set).
func (c *Check) Kind() Kind {
	switch {
	case c.Expect != nil:
		return KindExpect
	case c.JSON != nil:
		return KindJSON
	case c.Tool != nil:
		return KindToolCall
	case c.Stop != nil:
		return KindStop
	case c.Length != nil:
		return KindLength
	case c.Model != nil:
		return KindModel
	}
	return ""
}
