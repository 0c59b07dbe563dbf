// Original file: proto/v1/plugin.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AddedContextResponse as _hookhost_plugin_v1_AddedContextResponse, AddedContextResponse__Output as _hookhost_plugin_v1_AddedContextResponse__Output } from '../../../hookhost/plugin/v1/AddedContextResponse';
import type { ApiRequest as _hookhost_plugin_v1_ApiRequest, ApiRequest__Output as _hookhost_plugin_v1_ApiRequest__Output } from '../../../hookhost/plugin/v1/ApiRequest';
import type { ConfigureRequest as _hookhost_plugin_v1_ConfigureRequest, ConfigureRequest__Output as _hookhost_plugin_v1_ConfigureRequest__Output } from '../../../hookhost/plugin/v1/ConfigureRequest';
import type { ConfigureResponse as _hookhost_plugin_v1_ConfigureResponse, ConfigureResponse__Output as _hookhost_plugin_v1_ConfigureResponse__Output } from '../../../hookhost/plugin/v1/ConfigureResponse';
import type { DescribeRequest as _hookhost_plugin_v1_DescribeRequest, DescribeRequest__Output as _hookhost_plugin_v1_DescribeRequest__Output } from '../../../hookhost/plugin/v1/DescribeRequest';
import type { Empty as _hookhost_plugin_v1_Empty, Empty__Output as _hookhost_plugin_v1_Empty__Output } from '../../../hookhost/plugin/v1/Empty';
import type { Inference as _hookhost_plugin_v1_Inference, Inference__Output as _hookhost_plugin_v1_Inference__Output } from '../../../hookhost/plugin/v1/Inference';
import type { LlmCall as _hookhost_plugin_v1_LlmCall, LlmCall__Output as _hookhost_plugin_v1_LlmCall__Output } from '../../../hookhost/plugin/v1/LlmCall';
import type { LlmOutput as _hookhost_plugin_v1_LlmOutput, LlmOutput__Output as _hookhost_plugin_v1_LlmOutput__Output } from '../../../hookhost/plugin/v1/LlmOutput';
import type { LlmRequest as _hookhost_plugin_v1_LlmRequest, LlmRequest__Output as _hookhost_plugin_v1_LlmRequest__Output } from '../../../hookhost/plugin/v1/LlmRequest';
import type { Manifest as _hookhost_plugin_v1_Manifest, Manifest__Output as _hookhost_plugin_v1_Manifest__Output } from '../../../hookhost/plugin/v1/Manifest';
import type { ModelResponseResponse as _hookhost_plugin_v1_ModelResponseResponse, ModelResponseResponse__Output as _hookhost_plugin_v1_ModelResponseResponse__Output } from '../../../hookhost/plugin/v1/ModelResponseResponse';
import type { PreToolCallResponse as _hookhost_plugin_v1_PreToolCallResponse, PreToolCallResponse__Output as _hookhost_plugin_v1_PreToolCallResponse__Output } from '../../../hookhost/plugin/v1/PreToolCallResponse';
import type { ReissueResponse as _hookhost_plugin_v1_ReissueResponse, ReissueResponse__Output as _hookhost_plugin_v1_ReissueResponse__Output } from '../../../hookhost/plugin/v1/ReissueResponse';
import type { RequestPatchResponse as _hookhost_plugin_v1_RequestPatchResponse, RequestPatchResponse__Output as _hookhost_plugin_v1_RequestPatchResponse__Output } from '../../../hookhost/plugin/v1/RequestPatchResponse';
import type { SessionEnd as _hookhost_plugin_v1_SessionEnd, SessionEnd__Output as _hookhost_plugin_v1_SessionEnd__Output } from '../../../hookhost/plugin/v1/SessionEnd';
import type { SessionStart as _hookhost_plugin_v1_SessionStart, SessionStart__Output as _hookhost_plugin_v1_SessionStart__Output } from '../../../hookhost/plugin/v1/SessionStart';
import type { TextResponse as _hookhost_plugin_v1_TextResponse, TextResponse__Output as _hookhost_plugin_v1_TextResponse__Output } from '../../../hookhost/plugin/v1/TextResponse';
import type { ToolCallOutcome as _hookhost_plugin_v1_ToolCallOutcome, ToolCallOutcome__Output as _hookhost_plugin_v1_ToolCallOutcome__Output } from '../../../hookhost/plugin/v1/ToolCallOutcome';
import type { ToolCallRequest as _hookhost_plugin_v1_ToolCallRequest, ToolCallRequest__Output as _hookhost_plugin_v1_ToolCallRequest__Output } from '../../../hookhost/plugin/v1/ToolCallRequest';
import type { ToolListRequest as _hookhost_plugin_v1_ToolListRequest, ToolListRequest__Output as _hookhost_plugin_v1_ToolListRequest__Output } from '../../../hookhost/plugin/v1/ToolListRequest';
import type { ToolListResponse as _hookhost_plugin_v1_ToolListResponse, ToolListResponse__Output as _hookhost_plugin_v1_ToolListResponse__Output } from '../../../hookhost/plugin/v1/ToolListResponse';
import type { ToolResultResponse as _hookhost_plugin_v1_ToolResultResponse, ToolResultResponse__Output as _hookhost_plugin_v1_ToolResultResponse__Output } from '../../../hookhost/plugin/v1/ToolResultResponse';
import type { UserMessage as _hookhost_plugin_v1_UserMessage, UserMessage__Output as _hookhost_plugin_v1_UserMessage__Output } from '../../../hookhost/plugin/v1/UserMessage';
import type { UserMessageResponse as _hookhost_plugin_v1_UserMessageResponse, UserMessageResponse__Output as _hookhost_plugin_v1_UserMessageResponse__Output } from '../../../hookhost/plugin/v1/UserMessageResponse';

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
  
  OnSessionEnd(argument: _hookhost_plugin_v1_SessionEnd, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  OnSessionEnd(argument: _hookhost_plugin_v1_SessionEnd, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  OnSessionEnd(argument: _hookhost_plugin_v1_SessionEnd, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  OnSessionEnd(argument: _hookhost_plugin_v1_SessionEnd, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  onSessionEnd(argument: _hookhost_plugin_v1_SessionEnd, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  onSessionEnd(argument: _hookhost_plugin_v1_SessionEnd, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  onSessionEnd(argument: _hookhost_plugin_v1_SessionEnd, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  onSessionEnd(argument: _hookhost_plugin_v1_SessionEnd, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  
  OnSessionStart(argument: _hookhost_plugin_v1_SessionStart, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  OnSessionStart(argument: _hookhost_plugin_v1_SessionStart, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  OnSessionStart(argument: _hookhost_plugin_v1_SessionStart, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  OnSessionStart(argument: _hookhost_plugin_v1_SessionStart, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  onSessionStart(argument: _hookhost_plugin_v1_SessionStart, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  onSessionStart(argument: _hookhost_plugin_v1_SessionStart, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  onSessionStart(argument: _hookhost_plugin_v1_SessionStart, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  onSessionStart(argument: _hookhost_plugin_v1_SessionStart, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  
  OnUserMessage(argument: _hookhost_plugin_v1_UserMessage, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_UserMessageResponse__Output>): grpc.ClientUnaryCall;
  OnUserMessage(argument: _hookhost_plugin_v1_UserMessage, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_UserMessageResponse__Output>): grpc.ClientUnaryCall;
  OnUserMessage(argument: _hookhost_plugin_v1_UserMessage, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_UserMessageResponse__Output>): grpc.ClientUnaryCall;
  OnUserMessage(argument: _hookhost_plugin_v1_UserMessage, callback: grpc.requestCallback<_hookhost_plugin_v1_UserMessageResponse__Output>): grpc.ClientUnaryCall;
  onUserMessage(argument: _hookhost_plugin_v1_UserMessage, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_UserMessageResponse__Output>): grpc.ClientUnaryCall;
  onUserMessage(argument: _hookhost_plugin_v1_UserMessage, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_UserMessageResponse__Output>): grpc.ClientUnaryCall;
  onUserMessage(argument: _hookhost_plugin_v1_UserMessage, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_UserMessageResponse__Output>): grpc.ClientUnaryCall;
  onUserMessage(argument: _hookhost_plugin_v1_UserMessage, callback: grpc.requestCallback<_hookhost_plugin_v1_UserMessageResponse__Output>): grpc.ClientUnaryCall;
  
  PostLlmCall(argument: _hookhost_plugin_v1_Inference, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  PostLlmCall(argument: _hookhost_plugin_v1_Inference, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  PostLlmCall(argument: _hookhost_plugin_v1_Inference, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  PostLlmCall(argument: _hookhost_plugin_v1_Inference, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  postLlmCall(argument: _hookhost_plugin_v1_Inference, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  postLlmCall(argument: _hookhost_plugin_v1_Inference, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  postLlmCall(argument: _hookhost_plugin_v1_Inference, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  postLlmCall(argument: _hookhost_plugin_v1_Inference, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  
  PostLlmCallCanReissue(argument: _hookhost_plugin_v1_LlmCall, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ReissueResponse__Output>): grpc.ClientUnaryCall;
  PostLlmCallCanReissue(argument: _hookhost_plugin_v1_LlmCall, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ReissueResponse__Output>): grpc.ClientUnaryCall;
  PostLlmCallCanReissue(argument: _hookhost_plugin_v1_LlmCall, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ReissueResponse__Output>): grpc.ClientUnaryCall;
  PostLlmCallCanReissue(argument: _hookhost_plugin_v1_LlmCall, callback: grpc.requestCallback<_hookhost_plugin_v1_ReissueResponse__Output>): grpc.ClientUnaryCall;
  postLlmCallCanReissue(argument: _hookhost_plugin_v1_LlmCall, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ReissueResponse__Output>): grpc.ClientUnaryCall;
  postLlmCallCanReissue(argument: _hookhost_plugin_v1_LlmCall, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ReissueResponse__Output>): grpc.ClientUnaryCall;
  postLlmCallCanReissue(argument: _hookhost_plugin_v1_LlmCall, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ReissueResponse__Output>): grpc.ClientUnaryCall;
  postLlmCallCanReissue(argument: _hookhost_plugin_v1_LlmCall, callback: grpc.requestCallback<_hookhost_plugin_v1_ReissueResponse__Output>): grpc.ClientUnaryCall;
  
  PostToolCall(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  PostToolCall(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  PostToolCall(argument: _hookhost_plugin_v1_ToolCallOutcome, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  PostToolCall(argument: _hookhost_plugin_v1_ToolCallOutcome, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  postToolCall(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  postToolCall(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  postToolCall(argument: _hookhost_plugin_v1_ToolCallOutcome, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  postToolCall(argument: _hookhost_plugin_v1_ToolCallOutcome, callback: grpc.requestCallback<_hookhost_plugin_v1_Empty__Output>): grpc.ClientUnaryCall;
  
  PostToolCallCanAddContext(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_AddedContextResponse__Output>): grpc.ClientUnaryCall;
  PostToolCallCanAddContext(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_AddedContextResponse__Output>): grpc.ClientUnaryCall;
  PostToolCallCanAddContext(argument: _hookhost_plugin_v1_ToolCallOutcome, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_AddedContextResponse__Output>): grpc.ClientUnaryCall;
  PostToolCallCanAddContext(argument: _hookhost_plugin_v1_ToolCallOutcome, callback: grpc.requestCallback<_hookhost_plugin_v1_AddedContextResponse__Output>): grpc.ClientUnaryCall;
  postToolCallCanAddContext(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_AddedContextResponse__Output>): grpc.ClientUnaryCall;
  postToolCallCanAddContext(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_AddedContextResponse__Output>): grpc.ClientUnaryCall;
  postToolCallCanAddContext(argument: _hookhost_plugin_v1_ToolCallOutcome, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_AddedContextResponse__Output>): grpc.ClientUnaryCall;
  postToolCallCanAddContext(argument: _hookhost_plugin_v1_ToolCallOutcome, callback: grpc.requestCallback<_hookhost_plugin_v1_AddedContextResponse__Output>): grpc.ClientUnaryCall;
  
  PreApiRequestMutable(argument: _hookhost_plugin_v1_ApiRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_RequestPatchResponse__Output>): grpc.ClientUnaryCall;
  PreApiRequestMutable(argument: _hookhost_plugin_v1_ApiRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_RequestPatchResponse__Output>): grpc.ClientUnaryCall;
  PreApiRequestMutable(argument: _hookhost_plugin_v1_ApiRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_RequestPatchResponse__Output>): grpc.ClientUnaryCall;
  PreApiRequestMutable(argument: _hookhost_plugin_v1_ApiRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_RequestPatchResponse__Output>): grpc.ClientUnaryCall;
  preApiRequestMutable(argument: _hookhost_plugin_v1_ApiRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_RequestPatchResponse__Output>): grpc.ClientUnaryCall;
  preApiRequestMutable(argument: _hookhost_plugin_v1_ApiRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_RequestPatchResponse__Output>): grpc.ClientUnaryCall;
  preApiRequestMutable(argument: _hookhost_plugin_v1_ApiRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_RequestPatchResponse__Output>): grpc.ClientUnaryCall;
  preApiRequestMutable(argument: _hookhost_plugin_v1_ApiRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_RequestPatchResponse__Output>): grpc.ClientUnaryCall;
  
  PreLlmCallCanProvideResponse(argument: _hookhost_plugin_v1_LlmRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ModelResponseResponse__Output>): grpc.ClientUnaryCall;
  PreLlmCallCanProvideResponse(argument: _hookhost_plugin_v1_LlmRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ModelResponseResponse__Output>): grpc.ClientUnaryCall;
  PreLlmCallCanProvideResponse(argument: _hookhost_plugin_v1_LlmRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ModelResponseResponse__Output>): grpc.ClientUnaryCall;
  PreLlmCallCanProvideResponse(argument: _hookhost_plugin_v1_LlmRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_ModelResponseResponse__Output>): grpc.ClientUnaryCall;
  preLlmCallCanProvideResponse(argument: _hookhost_plugin_v1_LlmRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ModelResponseResponse__Output>): grpc.ClientUnaryCall;
  preLlmCallCanProvideResponse(argument: _hookhost_plugin_v1_LlmRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ModelResponseResponse__Output>): grpc.ClientUnaryCall;
  preLlmCallCanProvideResponse(argument: _hookhost_plugin_v1_LlmRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ModelResponseResponse__Output>): grpc.ClientUnaryCall;
  preLlmCallCanProvideResponse(argument: _hookhost_plugin_v1_LlmRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_ModelResponseResponse__Output>): grpc.ClientUnaryCall;
  
  PreToolCall(argument: _hookhost_plugin_v1_ToolCallRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_PreToolCallResponse__Output>): grpc.ClientUnaryCall;
  PreToolCall(argument: _hookhost_plugin_v1_ToolCallRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_PreToolCallResponse__Output>): grpc.ClientUnaryCall;
  PreToolCall(argument: _hookhost_plugin_v1_ToolCallRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_PreToolCallResponse__Output>): grpc.ClientUnaryCall;
  PreToolCall(argument: _hookhost_plugin_v1_ToolCallRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_PreToolCallResponse__Output>): grpc.ClientUnaryCall;
  preToolCall(argument: _hookhost_plugin_v1_ToolCallRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_PreToolCallResponse__Output>): grpc.ClientUnaryCall;
  preToolCall(argument: _hookhost_plugin_v1_ToolCallRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_PreToolCallResponse__Output>): grpc.ClientUnaryCall;
  preToolCall(argument: _hookhost_plugin_v1_ToolCallRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_PreToolCallResponse__Output>): grpc.ClientUnaryCall;
  preToolCall(argument: _hookhost_plugin_v1_ToolCallRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_PreToolCallResponse__Output>): grpc.ClientUnaryCall;
  
  PreToolCallCanProvideResult(argument: _hookhost_plugin_v1_ToolCallRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  PreToolCallCanProvideResult(argument: _hookhost_plugin_v1_ToolCallRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  PreToolCallCanProvideResult(argument: _hookhost_plugin_v1_ToolCallRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  PreToolCallCanProvideResult(argument: _hookhost_plugin_v1_ToolCallRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  preToolCallCanProvideResult(argument: _hookhost_plugin_v1_ToolCallRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  preToolCallCanProvideResult(argument: _hookhost_plugin_v1_ToolCallRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  preToolCallCanProvideResult(argument: _hookhost_plugin_v1_ToolCallRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  preToolCallCanProvideResult(argument: _hookhost_plugin_v1_ToolCallRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  
  PreToolListFinalized(argument: _hookhost_plugin_v1_ToolListRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolListResponse__Output>): grpc.ClientUnaryCall;
  PreToolListFinalized(argument: _hookhost_plugin_v1_ToolListRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolListResponse__Output>): grpc.ClientUnaryCall;
  PreToolListFinalized(argument: _hookhost_plugin_v1_ToolListRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolListResponse__Output>): grpc.ClientUnaryCall;
  PreToolListFinalized(argument: _hookhost_plugin_v1_ToolListRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolListResponse__Output>): grpc.ClientUnaryCall;
  preToolListFinalized(argument: _hookhost_plugin_v1_ToolListRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolListResponse__Output>): grpc.ClientUnaryCall;
  preToolListFinalized(argument: _hookhost_plugin_v1_ToolListRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolListResponse__Output>): grpc.ClientUnaryCall;
  preToolListFinalized(argument: _hookhost_plugin_v1_ToolListRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolListResponse__Output>): grpc.ClientUnaryCall;
  preToolListFinalized(argument: _hookhost_plugin_v1_ToolListRequest, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolListResponse__Output>): grpc.ClientUnaryCall;
  
  TransformLlmOutput(argument: _hookhost_plugin_v1_LlmOutput, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_TextResponse__Output>): grpc.ClientUnaryCall;
  TransformLlmOutput(argument: _hookhost_plugin_v1_LlmOutput, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_TextResponse__Output>): grpc.ClientUnaryCall;
  TransformLlmOutput(argument: _hookhost_plugin_v1_LlmOutput, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_TextResponse__Output>): grpc.ClientUnaryCall;
  TransformLlmOutput(argument: _hookhost_plugin_v1_LlmOutput, callback: grpc.requestCallback<_hookhost_plugin_v1_TextResponse__Output>): grpc.ClientUnaryCall;
  transformLlmOutput(argument: _hookhost_plugin_v1_LlmOutput, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_TextResponse__Output>): grpc.ClientUnaryCall;
  transformLlmOutput(argument: _hookhost_plugin_v1_LlmOutput, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_TextResponse__Output>): grpc.ClientUnaryCall;
  transformLlmOutput(argument: _hookhost_plugin_v1_LlmOutput, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_TextResponse__Output>): grpc.ClientUnaryCall;
  transformLlmOutput(argument: _hookhost_plugin_v1_LlmOutput, callback: grpc.requestCallback<_hookhost_plugin_v1_TextResponse__Output>): grpc.ClientUnaryCall;
  
  TransformToolResult(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  TransformToolResult(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  TransformToolResult(argument: _hookhost_plugin_v1_ToolCallOutcome, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  TransformToolResult(argument: _hookhost_plugin_v1_ToolCallOutcome, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  transformToolResult(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  transformToolResult(argument: _hookhost_plugin_v1_ToolCallOutcome, metadata: grpc.Metadata, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  transformToolResult(argument: _hookhost_plugin_v1_ToolCallOutcome, options: grpc.CallOptions, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  transformToolResult(argument: _hookhost_plugin_v1_ToolCallOutcome, callback: grpc.requestCallback<_hookhost_plugin_v1_ToolResultResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface PluginHandlers extends grpc.UntypedServiceImplementation {
  Configure: grpc.handleUnaryCall<_hookhost_plugin_v1_ConfigureRequest__Output, _hookhost_plugin_v1_ConfigureResponse>;
  
  Describe: grpc.handleUnaryCall<_hookhost_plugin_v1_DescribeRequest__Output, _hookhost_plugin_v1_Manifest>;
  
  OnSessionEnd: grpc.handleUnaryCall<_hookhost_plugin_v1_SessionEnd__Output, _hookhost_plugin_v1_Empty>;
  
  OnSessionStart: grpc.handleUnaryCall<_hookhost_plugin_v1_SessionStart__Output, _hookhost_plugin_v1_Empty>;
  
  OnUserMessage: grpc.handleUnaryCall<_hookhost_plugin_v1_UserMessage__Output, _hookhost_plugin_v1_UserMessageResponse>;
  
  PostLlmCall: grpc.handleUnaryCall<_hookhost_plugin_v1_Inference__Output, _hookhost_plugin_v1_Empty>;
  
  PostLlmCallCanReissue: grpc.handleUnaryCall<_hookhost_plugin_v1_LlmCall__Output, _hookhost_plugin_v1_ReissueResponse>;
  
  PostToolCall: grpc.handleUnaryCall<_hookhost_plugin_v1_ToolCallOutcome__Output, _hookhost_plugin_v1_Empty>;
  
  PostToolCallCanAddContext: grpc.handleUnaryCall<_hookhost_plugin_v1_ToolCallOutcome__Output, _hookhost_plugin_v1_AddedContextResponse>;
  
  PreApiRequestMutable: grpc.handleUnaryCall<_hookhost_plugin_v1_ApiRequest__Output, _hookhost_plugin_v1_RequestPatchResponse>;
  
  PreLlmCallCanProvideResponse: grpc.handleUnaryCall<_hookhost_plugin_v1_LlmRequest__Output, _hookhost_plugin_v1_ModelResponseResponse>;
  
  PreToolCall: grpc.handleUnaryCall<_hookhost_plugin_v1_ToolCallRequest__Output, _hookhost_plugin_v1_PreToolCallResponse>;
  
  PreToolCallCanProvideResult: grpc.handleUnaryCall<_hookhost_plugin_v1_ToolCallRequest__Output, _hookhost_plugin_v1_ToolResultResponse>;
  
  PreToolListFinalized: grpc.handleUnaryCall<_hookhost_plugin_v1_ToolListRequest__Output, _hookhost_plugin_v1_ToolListResponse>;
  
  TransformLlmOutput: grpc.handleUnaryCall<_hookhost_plugin_v1_LlmOutput__Output, _hookhost_plugin_v1_TextResponse>;
  
  TransformToolResult: grpc.handleUnaryCall<_hookhost_plugin_v1_ToolCallOutcome__Output, _hookhost_plugin_v1_ToolResultResponse>;
  
}

export interface PluginDefinition extends grpc.ServiceDefinition {
  Configure: MethodDefinition<_hookhost_plugin_v1_ConfigureRequest, _hookhost_plugin_v1_ConfigureResponse, _hookhost_plugin_v1_ConfigureRequest__Output, _hookhost_plugin_v1_ConfigureResponse__Output>
  Describe: MethodDefinition<_hookhost_plugin_v1_DescribeRequest, _hookhost_plugin_v1_Manifest, _hookhost_plugin_v1_DescribeRequest__Output, _hookhost_plugin_v1_Manifest__Output>
  OnSessionEnd: MethodDefinition<_hookhost_plugin_v1_SessionEnd, _hookhost_plugin_v1_Empty, _hookhost_plugin_v1_SessionEnd__Output, _hookhost_plugin_v1_Empty__Output>
  OnSessionStart: MethodDefinition<_hookhost_plugin_v1_SessionStart, _hookhost_plugin_v1_Empty, _hookhost_plugin_v1_SessionStart__Output, _hookhost_plugin_v1_Empty__Output>
  OnUserMessage: MethodDefinition<_hookhost_plugin_v1_UserMessage, _hookhost_plugin_v1_UserMessageResponse, _hookhost_plugin_v1_UserMessage__Output, _hookhost_plugin_v1_UserMessageResponse__Output>
  PostLlmCall: MethodDefinition<_hookhost_plugin_v1_Inference, _hookhost_plugin_v1_Empty, _hookhost_plugin_v1_Inference__Output, _hookhost_plugin_v1_Empty__Output>
  PostLlmCallCanReissue: MethodDefinition<_hookhost_plugin_v1_LlmCall, _hookhost_plugin_v1_ReissueResponse, _hookhost_plugin_v1_LlmCall__Output, _hookhost_plugin_v1_ReissueResponse__Output>
  PostToolCall: MethodDefinition<_hookhost_plugin_v1_ToolCallOutcome, _hookhost_plugin_v1_Empty, _hookhost_plugin_v1_ToolCallOutcome__Output, _hookhost_plugin_v1_Empty__Output>
  PostToolCallCanAddContext: MethodDefinition<_hookhost_plugin_v1_ToolCallOutcome, _hookhost_plugin_v1_AddedContextResponse, _hookhost_plugin_v1_ToolCallOutcome__Output, _hookhost_plugin_v1_AddedContextResponse__Output>
  PreApiRequestMutable: MethodDefinition<_hookhost_plugin_v1_ApiRequest, _hookhost_plugin_v1_RequestPatchResponse, _hookhost_plugin_v1_ApiRequest__Output, _hookhost_plugin_v1_RequestPatchResponse__Output>
  PreLlmCallCanProvideResponse: MethodDefinition<_hookhost_plugin_v1_LlmRequest, _hookhost_plugin_v1_ModelResponseResponse, _hookhost_plugin_v1_LlmRequest__Output, _hookhost_plugin_v1_ModelResponseResponse__Output>
  PreToolCall: MethodDefinition<_hookhost_plugin_v1_ToolCallRequest, _hookhost_plugin_v1_PreToolCallResponse, _hookhost_plugin_v1_ToolCallRequest__Output, _hookhost_plugin_v1_PreToolCallResponse__Output>
  PreToolCallCanProvideResult: MethodDefinition<_hookhost_plugin_v1_ToolCallRequest, _hookhost_plugin_v1_ToolResultResponse, _hookhost_plugin_v1_ToolCallRequest__Output, _hookhost_plugin_v1_ToolResultResponse__Output>
  PreToolListFinalized: MethodDefinition<_hookhost_plugin_v1_ToolListRequest, _hookhost_plugin_v1_ToolListResponse, _hookhost_plugin_v1_ToolListRequest__Output, _hookhost_plugin_v1_ToolListResponse__Output>
  TransformLlmOutput: MethodDefinition<_hookhost_plugin_v1_LlmOutput, _hookhost_plugin_v1_TextResponse, _hookhost_plugin_v1_LlmOutput__Output, _hookhost_plugin_v1_TextResponse__Output>
  TransformToolResult: MethodDefinition<_hookhost_plugin_v1_ToolCallOutcome, _hookhost_plugin_v1_ToolResultResponse, _hookhost_plugin_v1_ToolCallOutcome__Output, _hookhost_plugin_v1_ToolResultResponse__Output>
}
