// Original file: proto/v1/plugin.proto

import type { ToolSpec as _hookhost_plugin_v1_ToolSpec, ToolSpec__Output as _hookhost_plugin_v1_ToolSpec__Output } from '../../../hookhost/plugin/v1/ToolSpec';
import type { HookMatchers as _hookhost_plugin_v1_HookMatchers, HookMatchers__Output as _hookhost_plugin_v1_HookMatchers__Output } from '../../../hookhost/plugin/v1/HookMatchers';
import type { ConfigKeys as _hookhost_plugin_v1_ConfigKeys, ConfigKeys__Output as _hookhost_plugin_v1_ConfigKeys__Output } from '../../../hookhost/plugin/v1/ConfigKeys';
import type { HookOptions as _hookhost_plugin_v1_HookOptions, HookOptions__Output as _hookhost_plugin_v1_HookOptions__Output } from '../../../hookhost/plugin/v1/HookOptions';

export interface Manifest {
  'name'?: (string);
  'version'?: (string);
  'hooks'?: (string)[];
  'matchers'?: (string)[];
  'tools'?: (_hookhost_plugin_v1_ToolSpec)[];
  'hookMatchers'?: (_hookhost_plugin_v1_HookMatchers)[];
  'config'?: (_hookhost_plugin_v1_ConfigKeys | null);
  'hookOptions'?: (_hookhost_plugin_v1_HookOptions)[];
  'modelStages'?: (boolean);
  'observerBatches'?: (boolean);
  'lane'?: (boolean);
}

export interface Manifest__Output {
  'name'?: (string);
  'version'?: (string);
  'hooks'?: (string)[];
  'matchers'?: (string)[];
  'tools'?: (_hookhost_plugin_v1_ToolSpec__Output)[];
  'hookMatchers'?: (_hookhost_plugin_v1_HookMatchers__Output)[];
  'config'?: (_hookhost_plugin_v1_ConfigKeys__Output);
  'hookOptions'?: (_hookhost_plugin_v1_HookOptions__Output)[];
  'modelStages'?: (boolean);
  'observerBatches'?: (boolean);
  'lane'?: (boolean);
}
