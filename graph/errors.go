package graph

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/colline/colline/record"
)

// IsTransient reports whether err is a failure that a later attempt of the same write may not
// have: Neo4j unreachable or restarting, a lost connection, a timeout (Writer.Timeout included),
// a deadlock or leader change, or the driver's own retries running out on one of these. Callers should back off and
// retry, never skip the write.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var (
		conn  *neo4j.ConnectivityError
		limit *neo4j.TransactionExecutionLimit
		nerr  net.Error
		dbErr *neo4j.Neo4jError
	)
	switch {
	case errors.As(err, &conn), errors.As(err, &limit), errors.As(err, &nerr):
		return true
	case errors.As(err, &dbErr):
		switch dbErr.Code {
		case "Neo.ClientError.Transaction.TransactionTimedOut", "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration":
			return true // Writer.Timeout ran out (a held lock, a long transaction): a later attempt may pass
		}
		return dbErr.IsRetriable() // transient classification, leader changes
	}
	return neo4j.IsRetryable(err)
}

// IsRejected reports whether err means that the data of the batch, not the state of Neo4j, made
// the write fail, so that retrying the same batch cannot succeed: an invalid item (record.ErrInvalidItem)
// or a statement error that depends on parameter values. A caller can then write the items one
// by one to find the culprit.
//
// Errors that are neither transient nor rejected (authentication, a missing database, ...) need
// an operator; the consumer keeps retrying them rather than losing data.
func IsRejected(err error) bool {
	if errors.Is(err, record.ErrInvalidItem) {
		return true
	}
	var dbErr *neo4j.Neo4jError
	if !errors.As(err, &dbErr) {
		return false
	}
	switch dbErr.Code {
	case "Neo.ClientError.Statement.TypeError",
		"Neo.ClientError.Statement.ArgumentError",
		"Neo.ClientError.Statement.SemanticError",
		"Neo.ClientError.Schema.ConstraintValidationFailed":
		return true
	}
	return false
}

// ErrUntrusted means that Neo4j's TLS certificate did not verify against the trusted CAs (the
// system's, or the CA file given to NewDriver): an operator must trust its CA or fix the URI's host.
var ErrUntrusted = errors.New("Neo4j's TLS certificate is not trusted")

// untrusted reports whether a driver error is a failed certificate verification. The driver's
// ConnectivityError keeps its cause as text only, and every crypto/x509 error starts with "x509: ".
func untrusted(err error) bool {
	var cv *tls.CertificateVerificationError
	return errors.As(err, &cv) || strings.Contains(err.Error(), "x509: ")
}
