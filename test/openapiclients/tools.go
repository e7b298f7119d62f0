//go:build tools

package openapiclients

// The generated clients' own imports, required here so that this module's go.mod and go.sum
// pin them and the module cache holds them: the test builds each client with exactly these
// versions, without asking the module proxy for newer ones.
import (
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/go-faster/errors"
	_ "github.com/go-faster/jx"
	_ "github.com/google/uuid"
	_ "github.com/labstack/echo/v4"
	_ "github.com/oapi-codegen/runtime"
	_ "github.com/ogen-go/ogen"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/metric"
	_ "go.opentelemetry.io/otel/trace"
)
