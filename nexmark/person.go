package nexmark

// person fills p for the person-creating event eventID at event time ts.
// Random draws follow the reference's order: name, email, credit card, city,
// state, extra.
func (g *Generator) person(p *Person, eventID, ts int64, r *splitRandom) {
	b := g.scratch[:0]
	b = append(b, firstNames[r.nextIntN(int32(len(firstNames)))]...)
	b = append(b, ' ')
	b = append(b, lastNames[r.nextIntN(int32(len(lastNames)))]...)
	name := string(b)

	b = appendSpacedString(b[:0], r, 7)
	b = append(b, '@')
	b = appendSpacedString(b, r, 5)
	b = append(b, ".com"...)
	email := string(b)

	b = b[:0]
	for i := range 4 {
		if i > 0 {
			b = append(b, ' ')
		}
		n := r.nextIntN(10000)
		b = append(b, byte('0'+n/1000), byte('0'+n/100%10), byte('0'+n/10%10), byte('0'+n%10))
	}
	creditCard := string(b)
	g.scratch = b

	city := usCities[r.nextIntN(int32(len(usCities)))]
	state := usStates[r.nextIntN(int32(len(usStates)))]
	size := 8 + len(name) + len(email) + len(creditCard) + len(city) + len(state)
	*p = Person{
		ID:           g.cfg.lastBase0PersonID(eventID) + FirstPersonID,
		Name:         name,
		EmailAddress: email,
		CreditCard:   creditCard,
		City:         city,
		State:        state,
		DateTime:     ts,
		Extra:        g.tables.nextExtra(r, size, g.cfg.AvgPersonBytes),
	}
}
