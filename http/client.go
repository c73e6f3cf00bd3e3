package http

import "github.com/shelfmark/shelfmark/http/client"

// Client talks to a Shelfmark server over its REST API (package client).
type Client = client.Client

// ClientOptions configure a Client (client.Options).
type ClientOptions = client.Options

// NewClient returns a client of the server at baseURL, for example
// "http://127.0.0.1:8080" (client.New).
func NewClient(baseURL string, opts ClientOptions) (*Client, error) {
	return client.New(baseURL, opts)
}
