package sdk

import (
	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/internal/wire"
)

// serverOptions are the SDK's own settings for a plugin's gRPC server (see
// wire.ServerOptions). It accepts requests up to wire.MaxMessageSize, the
// most any host may be configured to send
// (plugins.entries.<name>.max_request_size): a call the host was allowed to
// send is never refused by the plugin and blamed on it.
func serverOptions() []grpc.ServerOption {
	return wire.ServerOptions()
}
