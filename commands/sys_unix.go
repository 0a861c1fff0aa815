package commands

import "syscall"

var syscallZero = syscall.Signal(0)
