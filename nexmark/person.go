package nexmark

// person fills p for the person-creating event eventID at event time ts,
// with the fields in want (see Generator.NextWanted). Random draws follow
// the reference's order, which is the order of the fields: name, email,
// credit card, city, state, extra; the draws after the last wanted field
// are skipped, and the strings drawn are built only when wanted.
func (g *Generator) person(p *Person, eventID, ts int64, r *splitRandom, want Fields) {
	*p = Person{DateTime: ts}
	if want&personID != 0 {
		p.ID = g.cfg.lastBase0PersonID(eventID) + FirstPersonID
	}
	rest := want & (personFields &^ (personID | personDateTime))
	if rest == 0 {
		return
	}
	b := g.scratch[:0]
	b = append(b, firstNames[r.nextIntN(int32(len(firstNames)))]...)
	b = append(b, ' ')
	b = append(b, lastNames[r.nextIntN(int32(len(lastNames)))]...)
	size := 8 + len(b)
	if want&personName != 0 {
		p.Name = string(b)
	}
	if rest < personEmail {
		g.scratch = b
		return
	}
	b = appendSpacedString(b[:0], r, 7)
	b = append(b, '@')
	b = appendSpacedString(b, r, 5)
	b = append(b, ".com"...)
	size += len(b)
	if want&personEmail != 0 {
		p.EmailAddress = string(b)
	}
	g.scratch = b
	if rest < personCreditCard {
		return
	}
	var card [19]byte
	for i := range 4 {
		n := r.nextIntN(10000)
		card[5*i], card[5*i+1], card[5*i+2], card[5*i+3] = byte('0'+n/1000), byte('0'+n/100%10), byte('0'+n/10%10), byte('0'+n%10)
		if i < 3 {
			card[5*i+4] = ' '
		}
	}
	size += len(card)
	if want&personCreditCard != 0 {
		p.CreditCard = string(card[:])
	}
	if rest < personCity {
		return
	}
	city := usCities[r.nextIntN(int32(len(usCities)))]
	size += len(city)
	if want&personCity != 0 {
		p.City = city
	}
	if rest < personState {
		return
	}
	state := usStates[r.nextIntN(int32(len(usStates)))]
	size += len(state)
	if want&personState != 0 {
		p.State = state
	}
	if rest < personExtra {
		return
	}
	p.Extra = g.tables.nextExtra(r, size, g.cfg.AvgPersonBytes)
}
