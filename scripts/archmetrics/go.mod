module github.com/debussy-dev/debussy/scripts/archmetrics

go 1.26.8

require golang.org/x/tools v0.47.0

require (
	golang.org/x/mod v0.37.0 // indirect
	golang.org/x/sync v0.21.0 // indirect
)
