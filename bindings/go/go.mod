module github.com/hurray-dev/hurray/bindings/go

go 1.24
