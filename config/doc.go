// Package config is the consumer's configuration: environment variables with the COLLINE_ prefix
// (read with envconfig), their defaults and their validation. Errors name the variable.
package config
