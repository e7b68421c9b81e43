// Mailgun's own in-process API mock (mailgun-go's NewMockServer), served for the TypeScript tests.
module loopwright.dev/mailgun-mock

go 1.26.0

require github.com/mailgun/mailgun-go/v4 v4.23.0

require (
	github.com/go-chi/chi/v5 v5.2.1 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/mailgun/errors v0.4.0 // indirect
	github.com/modern-go/concurrent v0.0.0-20180228061459-e0a39a4cb421 // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
)
