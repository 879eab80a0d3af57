module github.com/hurray-dev/hurray/tests/matrix/go

go 1.24

require github.com/hurray-dev/hurray/bindings/go v0.0.0

replace github.com/hurray-dev/hurray/bindings/go => ../../../bindings/go
