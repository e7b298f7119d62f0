// Package moneycheck is a concurrency checker for money: it records a history of pixgate's
// operations on merchant accounts (each with the time it was invoked, its answer and the time of
// the answer) and judges it. Model is the sequential specification of one merchant account, for
// porcupine's linearizability checker: a real overdraw, a lost update or a state that only half
// of a change shows fits no order of the operations.
package moneycheck
