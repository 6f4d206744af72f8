import { describe, expect, it } from 'vitest';
import { DEFAULT_MASK_CONFIG, MASK_CONFIG_FORMAT, maskConfig, maskConfigChanges, maskConfigFromJson, maskConfigToJson, parseMaskConfig } from './index.ts';

describe('mask configuration files', () => {
  it('write → read gives the same configuration, every key written in the rule order', () => {
    const c = maskConfig({ echoMinJaccard: 0.45, retrievalMaxOverlap: 0.1, ratios: { other: 0.3 }, useOverrides: false });
    const text = maskConfigToJson(c);
    expect(JSON.parse(text).format).toBe(MASK_CONFIG_FORMAT);
    expect(Object.keys(JSON.parse(text)).slice(0, 4)).toEqual(['format', 'boilerplateMinRecurrence', 'boilerplateMaxChars', 'echoMinJaccard']);
    expect(parseMaskConfig(text, 'm.json')).toEqual(c);
    expect(parseMaskConfig(maskConfigToJson(DEFAULT_MASK_CONFIG), 'd.json')).toEqual(DEFAULT_MASK_CONFIG);
  });

  it('a partial file takes the defaults for what it leaves out', () => {
    const c = parseMaskConfig('{"ratios": {"echo": 0.1}, "actionMaxWords": 10}', 'p.json');
    expect(c).toEqual(maskConfig({ actionMaxWords: 10, ratios: { echo: 0.1 } }));
    expect(maskConfigChanges(c)).toEqual(['actionMaxWords 10', 'ratios.echo 0.1']);
    expect(maskConfigChanges(DEFAULT_MASK_CONFIG)).toEqual([]);
  });

  it('names the file and the field of every problem', () => {
    const bad = (text: string) => () => parseMaskConfig(text, 'cfg/mask.json');
    expect(bad('{"ratios": {"echo": 2}}')).toThrow('cfg/mask.json: ratios.echo: must be a number in [0, 1], got 2');
    expect(bad('{"ratios": {"noise": 0.1}}')).toThrow(/^cfg\/mask\.json: ratios\.noise: no such category/);
    expect(bad('{"ratios": [1]}')).toThrow(/^cfg\/mask\.json: ratios: must be an object/);
    expect(bad('{"echoMinJaccard": "0.5"}')).toThrow('cfg/mask.json: echoMinJaccard: must be a number in [0, 1], got "0.5"');
    expect(bad('{"retrievalMinRatio": -1}')).toThrow('cfg/mask.json: retrievalMinRatio: must be a number ≥ 0, got -1');
    expect(bad('{"useOverrides": "yes"}')).toThrow('cfg/mask.json: useOverrides: must be true or false, got "yes"');
    expect(bad('{"echoMinOverlap": 0.6}')).toThrow(/^cfg\/mask\.json: echoMinOverlap: no longer a setting; .*echoMinJaccard/);
    expect(bad('{"actionMaxWord": 3}')).toThrow(/^cfg\/mask\.json: actionMaxWord: no such setting \(settings: format, boilerplateMinRecurrence/);
    expect(bad('{"format": "other/2"}')).toThrow(`cfg/mask.json: format: must be "${MASK_CONFIG_FORMAT}", got "other/2"`);
    expect(bad('[1, 2]')).toThrow('cfg/mask.json: a mask configuration must be a JSON object, got an array');
    expect(bad('{"ratios": {')).toThrow(/^cfg\/mask\.json: not valid JSON/);
    expect(() => maskConfigFromJson(null, 'x')).toThrow('x: a mask configuration must be a JSON object, got null');
  });
});
