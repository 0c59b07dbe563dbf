module github.com/hookhost/hookhost

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/hashicorp/go-hclog v1.6.3
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.17 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
