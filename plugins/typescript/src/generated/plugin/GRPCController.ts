// Original file: proto/goplugin/grpc_controller.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { Empty as _plugin_Empty, Empty__Output as _plugin_Empty__Output } from '../plugin/Empty';

export interface GRPCControllerClient extends grpc.Client {
  Shutdown(argument: _plugin_Empty, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_plugin_Empty__Output>): grpc.ClientUnaryCall;
  Shutdown(argument: _plugin_Empty, metadata: grpc.Metadata, callback: grpc.requestCallback<_plugin_Empty__Output>): grpc.ClientUnaryCall;
  Shutdown(argument: _plugin_Empty, options: grpc.CallOptions, callback: grpc.requestCallback<_plugin_Empty__Output>): grpc.ClientUnaryCall;
  Shutdown(argument: _plugin_Empty, callback: grpc.requestCallback<_plugin_Empty__Output>): grpc.ClientUnaryCall;
  shutdown(argument: _plugin_Empty, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_plugin_Empty__Output>): grpc.ClientUnaryCall;
  shutdown(argument: _plugin_Empty, metadata: grpc.Metadata, callback: grpc.requestCallback<_plugin_Empty__Output>): grpc.ClientUnaryCall;
  shutdown(argument: _plugin_Empty, options: grpc.CallOptions, callback: grpc.requestCallback<_plugin_Empty__Output>): grpc.ClientUnaryCall;
  shutdown(argument: _plugin_Empty, callback: grpc.requestCallback<_plugin_Empty__Output>): grpc.ClientUnaryCall;
  
}

export interface GRPCControllerHandlers extends grpc.UntypedServiceImplementation {
  Shutdown: grpc.handleUnaryCall<_plugin_Empty__Output, _plugin_Empty>;
  
}

export interface GRPCControllerDefinition extends grpc.ServiceDefinition {
  Shutdown: MethodDefinition<_plugin_Empty, _plugin_Empty, _plugin_Empty__Output, _plugin_Empty__Output>
}
