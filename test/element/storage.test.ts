import { expect } from '@open-wc/testing';
import { ChatStorage, TabStorage } from '../../src/element/storage.js';

describe('storage', () => {
  beforeEach(() => {
    localStorage.clear();
    sessionStorage.clear();
  });

  it('keeps the conversation id and the citations of recent replies, namespaced', () => {
    const a = new ChatStorage('local', 'ns-a');
    const b = new ChatStorage('local', 'ns-b');
    a.conversationId = 'c1';
    expect(a.conversationId).to.equal('c1');
    expect(b.conversationId).to.equal(null);
    a.saveCitations('m1', [{ sourceName: 'One' }]);
    expect(a.citations('m1')).to.deep.equal([{ sourceName: 'One' }]);
    expect(b.citations('m1')).to.deep.equal([]);
    for (let i = 0; i < 60; i++) a.saveCitations(`n${i}`, [{ sourceName: `${i}` }]);
    expect(a.citations('m1')).to.deep.equal([], 'the oldest are dropped past 50');
    expect(a.citations('n59')).to.deep.equal([{ sourceName: '59' }]);
  });

  it('gives back stored citations as a list of objects in their places, whatever was written there', () => {
    const storage = new ChatStorage('local', 'ns');
    localStorage.setItem(
      'persona-chat:ns:citations',
      JSON.stringify({ m1: [null, { sourceName: { x: 1 }, partitions: 'oops' }], m2: 'oops' }),
    );
    expect(storage.citations('m1')).to.deep.equal([{}, { sourceName: { x: 1 }, partitions: 'oops' }]);
    expect(storage.citations('m2')).to.deep.equal([]);
    localStorage.setItem('persona-chat:ns:citations', '{not json');
    expect(storage.citations('m1')).to.deep.equal([]);
  });

  it('names the store it keeps its keys in, which a storage event from another tab names too', () => {
    expect(new ChatStorage('local', 'ns').store).to.equal(localStorage);
    expect(new ChatStorage('session', 'ns').store).to.equal(sessionStorage);
    const own = new ChatStorage('none', 'ns').store;
    expect(own).to.not.equal(localStorage);
    expect(own).to.not.equal(sessionStorage);
  });

  it('keeps nothing beyond the element with storage="none"', () => {
    const storage = new ChatStorage('none', 'ns');
    storage.conversationId = 'c1';
    expect(storage.conversationId).to.equal('c1');
    expect(storage.shared).to.equal(false);
    expect(localStorage.length + sessionStorage.length).to.equal(0);
  });

  it('keeps the draft per conversation, and the messages whose reply is not done, in this tab only', () => {
    const tab = new TabStorage('local', 'ns');
    tab.saveDraft(null, 'before');
    tab.saveDraft('c1', 'in c1');
    expect([tab.draft(null), tab.draft('c1'), tab.draft('c2')]).to.deep.equal(['before', 'in c1', '']);
    tab.saveDraft('c1', '');
    expect(sessionStorage.getItem('persona-chat:ns:draft:c1')).to.equal(null, 'an empty draft is forgotten');
    tab.addPending('k1', 'one', 'load-1');
    tab.addPending('k2', 'two', 'load-1');
    tab.acceptPending('k1');
    expect(tab.pending()).to.deep.equal(
      [
        { key: 'k1', text: 'one', page: 'load-1', accepted: 1 },
        { key: 'k2', text: 'two', page: 'load-1' },
      ],
      'an accepted message keeps its place',
    );
    tab.removePending('k1');
    expect(tab.pending()).to.deep.equal([{ key: 'k2', text: 'two', page: 'load-1' }]);
    expect(localStorage.length).to.equal(0);
    sessionStorage.setItem('persona-chat:ns:pending', '[1, {"key": 2}, {"key": "k", "text": "t", "page": "p"}]');
    expect(tab.pending()).to.deep.equal([{ key: 'k', text: 't', page: 'p' }]);
  });
});
