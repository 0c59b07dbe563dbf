// Original file: proto/v1/plugin.proto

import type { MessageList as _hookhost_plugin_v1_MessageList, MessageList__Output as _hookhost_plugin_v1_MessageList__Output } from '../../../hookhost/plugin/v1/MessageList';
import type { ToolList as _hookhost_plugin_v1_ToolList, ToolList__Output as _hookhost_plugin_v1_ToolList__Output } from '../../../hookhost/plugin/v1/ToolList';
import type { Long } from '@grpc/proto-loader';

export interface RequestPatch {
  'model'?: (string);
  'system'?: (string);
  'messages'?: (_hookhost_plugin_v1_MessageList | null);
  'tools'?: (_hookhost_plugin_v1_ToolList | null);
  'maxTokens'?: (number | string | Long);
  'temperature'?: (number | string);
  '_model'?: "model";
  '_system'?: "system";
  '_maxTokens'?: "maxTokens";
  '_temperature'?: "temperature";
}

export interface RequestPatch__Output {
  'model'?: (string);
  'system'?: (string);
  'messages'?: (_hookhost_plugin_v1_MessageList__Output);
  'tools'?: (_hookhost_plugin_v1_ToolList__Output);
  'maxTokens'?: (string);
  'temperature'?: (number);
  '_model'?: "model";
  '_system'?: "system";
  '_maxTokens'?: "maxTokens";
  '_temperature'?: "temperature";
}
