// Package plant owns the switches of deliberately planted bugs: known
// mistakes that production code can be made to commit, so that a test can
// show the simulation's checkers catch them. A simulation whose checkers never
// fail proves nothing.
//
// Every switch is off unless code of this module turns it on (the package is
// internal: the simulation and tests do, nothing else can). A hook in
// production code is one `if plant.On(plant.X)` at the spot where the bug
// would live; with the switch off it costs one load of a flag.
package plant
