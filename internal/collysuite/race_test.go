//go:build race

package collysuite

const raceEnabled = true
