package application

// Hooks for the black-box tests of package application_test: what they check that the
// exported API does not show.

// KeptAnswers counts the signed answers the location use case keeps.
func (uc *ShowPixLocation) KeptAnswers() int { return uc.cache.len() }
