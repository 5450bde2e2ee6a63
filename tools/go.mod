module github.com/robotsmw/robotsmw/tools

// The repository's own development tools, in a module of their own so that
// their dependencies never reach the library's users. Not in go.work:
// staticcheck needs a newer go line than the library's, and the workspace
// would impose it on every module.
go 1.26.0

// The one place staticcheck's version is pinned (scripts/staticcheck builds it).
tool honnef.co/go/tools/cmd/staticcheck

require (
	golang.org/x/mod v0.41.0
	golang.org/x/tools v0.51.0
)

require (
	github.com/BurntSushi/toml v1.4.1-0.20240526193622-a339e1f7089c // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/sync v0.23.0 // indirect
	honnef.co/go/tools v0.8.2 // indirect
)
