// Command mcpfake is an MCP server on stdio for hookhost's tests: echo
// returns its text, write records its path in the file $MCPFAKE_LOG, so a
// test can tell whether a call reached the server.
package main

import (
	"context"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text"`
}

type writeArgs struct {
	Path string `json:"path"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpfake", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "returns its text"},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "pretends to write a file"},
		func(_ context.Context, _ *mcp.CallToolRequest, a writeArgs) (*mcp.CallToolResult, any, error) {
			if p := os.Getenv("MCPFAKE_LOG"); p != "" {
				f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
				if err != nil {
					return nil, nil, err
				}
				f.WriteString(a.Path + "\n")
				f.Close()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wrote " + a.Path}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
