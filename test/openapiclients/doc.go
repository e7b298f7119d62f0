// Package openapiclients proves that pixgate's OpenAPI document (GET /openapi.json, the file
// adapters/httpapi/openapi.json embedded in the binary) gives a merchant a working client with
// the two common Go generators, each at its default options: oapi-codegen and ogen. Its test
// generates both clients, compiles each in a module of its own and checks that every operation
// of the document is a method of the client.
package openapiclients
