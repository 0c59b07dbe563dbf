// Original file: proto/v2/pluginv2.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ConfigureRequest as _hookhost_plugin_v1_ConfigureRequest, ConfigureRequest__Output as _hookhost_plugin_v1_ConfigureRequest__Output } from '../../../hookhost/plugin/v1/ConfigureRequest';
import type { ConfigureResponse as _hookhost_plugin_v1_ConfigureResponse, ConfigureResponse__Output as _hookhost_plugin_v1_ConfigureResponse__Output } from '../../../hookhost/plugin/v1/ConfigureResponse';
import type { DescribeRequest as _hookhost_plugin_v1_DescribeRequest, DescribeRequest__Output as _hookhost_plugin_v1_DescribeRequest__Output } from '../../../hookhost/plugin/v1/DescribeRequest';
import type { HostMessage as _hookhost_plugin_v2_HostMessage, HostMessage__Output as _hookhost_plugin_v2_HostMessage__Output } from '../../../hookhost/plugin/v2/HostMessage';
import type { Manifest as _hookhost_plugin_v1_Manifest, Manifest__Output as _hookhost_plugin_v1_Manifest__Output } from '../../../hookhost/plugin/v1/Manifest';
import type { PluginMessage as _hookhost_plugin_v2_PluginMessage, PluginMessage__Output as _hookhost_plugin_v2_PluginMessage__Output } from '../../../hookhost/plugin/v2/PluginMessage';

export interface PluginClient extends grpc.Client {
  Configure(argument: _hookhost_plugin_v1_ConfigureRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ConfigureResponse__Output>): grpc.ClientUnaryCall;
  Configure(argument: _hookhost_plugin_v1_ConfigureRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ConfigureResponse__Output>): grpc.ClientUnaryCall;
  Configure(argument: _hookhost_plugin_v1_ConfigureRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ConfigureResponse__Output>): grpc.ClientUnaryCall;
  Configure(argument: _hookhost_plugin_v1_ConfigureRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_ConfigureResponse__Output>): grpc.ClientUnaryCall;
  configure(argument: _hookhost_plugin_v1_ConfigureRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ConfigureResponse__Output>): grpc.ClientUnaryCall;
  configure(argument: _hookhost_plugin_v1_ConfigureRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ConfigureResponse__Output>): grpc.ClientUnaryCall;
  configure(argument: _hookhost_plugin_v1_ConfigureRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ConfigureResponse__Output>): grpc.ClientUnaryCall;
  configure(argument: _hookhost_plugin_v1_ConfigureRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_ConfigureResponse__Output>): grpc.ClientUnaryCall;
  
  Describe(argument: _hookhost_plugin_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Manifest__Output>): grpc.ClientUnaryCall;
  Describe(argument: _hookhost_plugin_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Manifest__Output>): grpc.ClientUnaryCall;
  Describe(argument: _hookhost_plugin_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Manifest__Output>): grpc.ClientUnaryCall;
  Describe(argument: _hookhost_plugin_v1_DescribeRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_Manifest__Output>): grpc.ClientUnaryCall;
  describe(argument: _hookhost_plugin_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Manifest__Output>): grpc.ClientUnaryCall;
  describe(argument: _hookhost_plugin_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Manifest__Output>): grpc.ClientUnaryCall;
  describe(argument: _hookhost_plugin_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Manifest__Output>): grpc.ClientUnaryCall;
  describe(argument: _hookhost_plugin_v1_DescribeRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_Manifest__Output>): grpc.ClientUnaryCall;
  
  Hooks(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_hookhost_plugin_v2_HostMessage, _hookhost_plugin_v2_PluginMessage__Output>;
  Hooks(options?: grpc.CallOptions): grpc.ClientDuplexStream<_hookhost_plugin_v2_HostMessage, _hookhost_plugin_v2_PluginMessage__Output>;
  hooks(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_hookhost_plugin_v2_HostMessage, _hookhost_plugin_v2_PluginMessage__Output>;
  hooks(options?: grpc.CallOptions): grpc.ClientDuplexStream<_hookhost_plugin_v2_HostMessage, _hookhost_plugin_v2_PluginMessage__Output>;
  
}

export interface PluginHandlers extends grpc.UntypedServiceImplementation {
  Configure: grpc.handleUnaryCall<_hookhost_plugin_v1_ConfigureRequest__Output, _hookhost_plugin_v1_ConfigureResponse>;
  
  Describe: grpc.handleUnaryCall<_hookhost_plugin_v1_DescribeRequest__Output, _hookhost_plugin_v1_Manifest>;
  
  Hooks: grpc.handleBidiStreamingCall<_hookhost_plugin_v2_HostMessage__Output, _hookhost_plugin_v2_PluginMessage>;
  
}

export interface PluginDefinition extends grpc.ServiceDefinition {
  Configure: MethodDefinition<_hookhost_plugin_v1_ConfigureRequest, _hookhost_plugin_v1_ConfigureResponse, _hookhost_plugin_v1_ConfigureRequest__Output, _hookhost_plugin_v1_ConfigureResponse__Output>
  Describe: MethodDefinition<_hookhost_plugin_v1_DescribeRequest, _hookhost_plugin_v1_Manifest, _hookhost_plugin_v1_DescribeRequest__Output, _hookhost_plugin_v1_Manifest__Output>
  Hooks: MethodDefinition<_hookhost_plugin_v2_HostMessage, _hookhost_plugin_v2_PluginMessage, _hookhost_plugin_v2_HostMessage__Output, _hookhost_plugin_v2_PluginMessage__Output>
}
