module github.com/robotsmw/robotsmw/bench

go 1.24.0

replace github.com/robotsmw/robotsmw => ../

require (
	github.com/robotsmw/robotsmw v0.0.0-00010101000000-000000000000
	github.com/temoto/robotstxt v1.1.2
)

require (
	golang.org/x/net v0.47.0 // indirect
	golang.org/x/text v0.31.0 // indirect
)
